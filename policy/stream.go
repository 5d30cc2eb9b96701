package policy

// Mid-stream faults: what happens when a stream fails after some of the answer already reached
// the caller (issue: live streaming). Before the first byte a failover is invisible; after it the
// caller has seen part of an answer, and baton either continues it on the next candidate or says
// plainly that it ended.

// Modes of streaming.midStream.
const (
	MidStreamContinue = "continue" // the next candidate continues the answer (continuation.go)
	MidStreamError    = "error"    // the caller's stream ends with an explicit error
)

// Streaming is streaming.* in the config.
type Streaming struct {
	MidStream string `json:"midStream,omitempty"` // "" is MidStreamContinue
}

// What a reply does after a failed attempt, given what of it reached the caller.
const (
	afterFaultFailover = ""         // nothing reached the caller: fail over as ever
	afterFaultContinue = "continue" // keep what the caller has; the next candidate continues it
	afterFaultStop     = "stop"     // end the reply: the caller's stream ends with an error
)

// midStreamAction decides what a failed attempt means for the answer the caller already holds:
// delivered is whether this attempt's content reached a live caller, partial the text of it.
func midStreamAction(mode string, delivered bool, partial string, toolCallsDelivered int) string {
	if !delivered || (partial == "" && toolCallsDelivered == 0) {
		return afterFaultFailover
	}
	if mode == MidStreamError || toolCallsDelivered > 0 {
		// A tool call the caller already holds cannot be taken back or continued.
		return afterFaultStop
	}
	return afterFaultContinue
}
