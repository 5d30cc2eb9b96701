package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"
)

// request is one caller's request: its tries (a try that met a dead door or a server that could
// not start the reply is tried again on the other door, as a caller's retry would) and how it
// ended.
type request struct {
	ID      int
	Agent   string
	Wire    wire
	Stream  bool
	Session string
	Tools   bool
	Start   time.Time
	End     time.Time
	Tries   []tryRecord
	// Hung: the request outlived its deadline.
	Hung     bool
	deadline time.Duration
}

// tryRecord is one try and the door it went to; Resumed counts the times a broken Responses
// stream was picked up again through a door.
type tryRecord struct {
	Marker  string `json:"marker"`
	Door    int    `json:"door"`
	Resumed int    `json:"resumed,omitempty"`
	Res     result `json:"result"`
}

func (r *request) last() *tryRecord {
	if len(r.Tries) == 0 {
		return nil
	}
	return &r.Tries[len(r.Tries)-1]
}

// answered reports a request that ended with a whole answer.
func (r *request) answered() bool { l := r.last(); return l != nil && l.Res.Answered }

// session is a conversation the load keeps going: one turn at a time.
type session struct {
	key     string
	agent   string
	wire    wire
	history []turn
	busy    bool
}

// load drives requests at a steady rate through the doors and keeps what each did.
type load struct {
	doors    func() []string // the doors' base URLs, in a fixed order
	agents   []string
	rate     float64
	deadline time.Duration // a request with no end by then is hung
	hc       *http.Client
	rng      *rand.Rand

	mu       sync.Mutex
	requests []*request
	sessions []*session
	nextID   int
	wg       sync.WaitGroup
}

// maxTurns ends a session after this many turns (a new one takes its place).
const maxTurns = 4

// run sends requests at l.rate until ctx ends, then waits for those in flight.
func (l *load) run(ctx context.Context) {
	every := time.Duration(float64(time.Second) / l.rate)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			l.wg.Wait()
			return
		case <-tick.C:
			r, s := l.next()
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				l.serve(r, s)
			}()
		}
	}
}

// next makes the next request: half streamed, half in a session, a fifth with tools (the tools
// agent's), over the three wires.
func (l *load) next() (*request, *session) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.nextID++
	r := &request{ID: l.nextID, deadline: l.deadline}
	r.Agent = l.agents[l.rng.IntN(len(l.agents))]
	r.Tools = r.Agent == agentTools
	switch n := l.rng.IntN(5); {
	case n < 2:
		r.Wire = wireChat
	case n < 4:
		r.Wire = wireMessages
	default:
		r.Wire = wireResponses
	}
	r.Stream = r.Wire == wireResponses || l.rng.IntN(2) == 0
	var s *session
	if l.rng.IntN(2) == 0 {
		s = l.freeSession(r.Agent, r.Wire)
		s.busy = true
		r.Session = s.key
	}
	l.requests = append(l.requests, r)
	return r, s
}

// freeSession is an idle session of agent on w, or a new one.
func (l *load) freeSession(agent string, w wire) *session {
	for _, s := range l.sessions {
		if !s.busy && s.agent == agent && s.wire == w && len(s.history) < maxTurns {
			return s
		}
	}
	s := &session{key: fmt.Sprintf("chaos-s%d", len(l.sessions)+1), agent: agent, wire: w}
	l.sessions = append(l.sessions, s)
	return s
}

// A caller's retries back off from retryPause, doubling up to maxRetryPause, within the request's
// deadline.
const (
	retryPause    = time.Second
	maxRetryPause = 16 * time.Second
)

// serve runs one request's tries until one ends with an answer or an error a retry would not
// mend, or the deadline passes.
func (l *load) serve(r *request, s *session) {
	ctx, cancel := context.WithTimeout(context.Background(), r.deadline)
	defer cancel()
	r.Start = time.Now()
	defer func() {
		r.End = time.Now()
		if s != nil {
			l.mu.Lock()
			if r.answered() {
				last := r.last()
				s.history = append(s.history, turn{User: try{Marker: last.Marker}.userMessage(), Assistant: last.Res.Text})
			}
			s.busy = false
			l.mu.Unlock()
		}
	}()
	var hist []turn
	if s != nil {
		l.mu.Lock()
		hist = append(hist, s.history...)
		l.mu.Unlock()
	}
	door := rand.IntN(2)
	for n := 1; ; n++ {
		doors := l.doors()
		t := try{Wire: r.Wire, Stream: r.Stream, Model: "agent:" + r.Agent, Session: r.Session, History: hist,
			Marker: fmt.Sprintf("r-%06d.%d", r.ID, n), Tools: r.Tools}
		rec := tryRecord{Marker: t.Marker, Door: door}
		rec.Res = do(ctx, l.hc, doors[door], t)
		// A Responses stream that broke after its response was created goes on in the
		// background: the caller picks it up through a door (the other first).
		for rec.Res.Fail == "connection" && rec.Res.ResponseID != "" && ctx.Err() == nil && rec.Resumed < 10 {
			rec.Resumed++
			time.Sleep(retryPause / 2)
			door = 1 - door
			rec.Res = resume(ctx, l.hc, doors[door], t, rec.Res)
		}
		r.Tries = append(r.Tries, rec)
		if ctx.Err() != nil {
			r.Hung = true
			return
		}
		if !retryable(rec.Res) {
			return
		}
		door = 1 - door
		// Backing off as a well-behaved client does: a door that is overloaded gets room.
		select {
		case <-ctx.Done():
			r.Hung = true
			return
		case <-time.After(min(retryPause<<(n-1), maxRetryPause)):
		}
	}
}

// retryable: what a caller's retry mends: a door that is gone (no response, or a stream cut
// without a word), a door that cannot start the reply now (503) or has no room (429 server_busy).
// Every other error names its cause and ends the request.
func retryable(r result) bool {
	if r.Answered {
		return false
	}
	switch r.Fail {
	case "connection":
		return true
	case "http", "stream_error":
		return r.Status == http.StatusServiceUnavailable || r.ErrCode == "server_busy" || strings.Contains(r.ErrMessage, "BATON_SERVE_MAX_INFLIGHT")
	}
	return false
}

// snapshot is the requests so far.
func (l *load) snapshot() []*request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*request(nil), l.requests...)
}
