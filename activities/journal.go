package activities

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/batonhq/baton/internal/live"
	"github.com/batonhq/baton/store"
	"go.uber.org/zap"
)

// A reply's event log takes what reaches its caller in batches: the first delta at once (the
// first token waits for one store write, not a batch), then at most every journalEvery or
// journalBatch deltas, so a long answer is a few rows, never one per token.
const (
	journalEvery = 50 * time.Millisecond
	journalBatch = 64
)

// journal writes what reaches the caller of a reply with an event log (AttemptRequest.LogKey) to
// the store, and only then hands it to the caller's live stream, if this process holds one: what
// a caller has seen is always in the log, so a caller that resumes through another front door
// gets the same events again, and a run of this attempt after a lost worker continues from what
// the log holds.
type journal struct {
	st     *store.Store
	key    string
	stream *live.Stream // nil: no live caller in this process
	logger *zap.Logger
	ctx    context.Context // the writes outlive the call's cancellation: what went out is logged

	mu      sync.Mutex
	next    int // the log's next index
	pending []live.Delta
	timer   *time.Timer
	started bool
}

// openJournal reads the reply's log: it returns the journal appending to it, and the text the
// caller already holds (every text delta logged, across the reply's attempts).
func openJournal(ctx context.Context, st *store.Store, key string, stream *live.Stream, logger *zap.Logger) (*journal, string, error) {
	j := &journal{st: st, key: key, stream: stream, logger: logger, ctx: context.WithoutCancel(ctx)}
	page, err := st.ReplyLog(ctx, key, 0)
	if errors.Is(err, store.ErrNotFound) {
		return j, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	var held strings.Builder
	for _, e := range page.Entries {
		d, err := live.DecodeDelta(e)
		if err != nil {
			return nil, "", err
		}
		held.WriteString(d.Text)
	}
	j.next, j.started = page.Next, page.Next > 0
	return j, held.String(), nil
}

// add logs d (now or with its batch) and then hands it to the live caller.
func (j *journal) add(d live.Delta) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.pending = append(j.pending, d)
	switch {
	case !j.started, len(j.pending) >= journalBatch:
		j.flushLocked()
	case j.timer == nil:
		j.timer = time.AfterFunc(journalEvery, j.flush)
	}
}

func (j *journal) flush() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.flushLocked()
}

func (j *journal) flushLocked() {
	if j.timer != nil {
		j.timer.Stop()
		j.timer = nil
	}
	if len(j.pending) == 0 {
		return
	}
	entries := make([][]byte, len(j.pending))
	for i, d := range j.pending {
		entries[i] = live.EncodeDelta(d)
	}
	ctx, cancel := context.WithTimeout(j.ctx, 10*time.Second)
	defer cancel()
	err := j.st.AppendReplyLog(ctx, j.key, j.next, entries)
	var gap *store.ReplyLogGapError
	if errors.As(err, &gap) && gap.Next < j.next {
		// The log is shorter than this run thought (it never is, unless rows were deleted): say so.
		j.logger.Warn("the reply's event log is shorter than expected", zap.String("log", j.key), zap.Int("next", gap.Next), zap.Int("expected", j.next))
	}
	if err != nil {
		// What is not logged is not sent either: the caller must never hold what a resumed stream
		// would not send again. The answer still completes the reply (its result carries it).
		j.logger.Warn("writing the reply's event log failed", zap.String("log", j.key), zap.Error(err))
		j.pending = nil
		return
	}
	j.started = true
	j.next += len(j.pending)
	if j.stream != nil {
		for _, d := range j.pending {
			j.stream.Send(d)
		}
	}
	j.pending = nil
}

// close logs and sends what is pending.
func (j *journal) close() { j.flush() }
