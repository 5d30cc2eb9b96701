package wire

import "io"

// A stream's keep-alives: bytes that a proxy with an idle timeout sees and that the wire's
// clients skip, sent while the answer has nothing to send (a retry wait, a long first token).
var (
	// openAIKeepAlive is an SSE comment, which every SSE parser skips.
	openAIKeepAlive = []byte(": keep-alive\n\n")
	// anthropicKeepAlive is Anthropic's own ping event, as its API sends it; its SDKs skip a
	// ping wherever it comes, so it may come before message_start.
	anthropicKeepAlive = []byte("event: ping\ndata: {\"type\": \"ping\"}\n\n")
)

// OpenAIKeepAlive writes an OpenAI stream's keep-alive to w.
func OpenAIKeepAlive(w io.Writer) error {
	_, err := w.Write(openAIKeepAlive)
	return err
}

// AnthropicKeepAlive writes an Anthropic stream's keep-alive (a ping event) to w.
func AnthropicKeepAlive(w io.Writer) error {
	_, err := w.Write(anthropicKeepAlive)
	return err
}
