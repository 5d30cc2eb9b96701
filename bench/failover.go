package bench

import (
	"context"
	"fmt"

	"github.com/batonhq/baton/policy"
)

// failover times replies whose primary answers 429 and whose fallback answers, against direct
// calls to the fallback (raw direct_winner_p50_ms, reply_failover_p50_ms), and gives the last
// reply.
func (b *bench) failover(ctx context.Context) (replied, error) {
	n := b.opts.Samples
	b.progress("one failover: %d direct calls to the winner and %d replies whose primary answers 429", n, n)
	var directWin, failover []float64
	var last replied
	for range n {
		d, err := b.direct(ctx, "gamma", profileWin)
		if err != nil {
			return replied{}, err
		}
		directWin = append(directWin, ms(d))
		// The primary's key must be usable again for the next sample to fail over once more.
		if _, err := b.store.RecordOutcome(ctx, "main", profileFail, policy.ClearCooldown); err != nil {
			return replied{}, err
		}
		r, err := b.reply(ctx, agentFail, b.session("failover"))
		if err != nil {
			return replied{}, err
		}
		if !r.servedBy(profileWin) || len(r.res.Attempts) != 2 {
			return replied{}, fmt.Errorf("a failover reply was served by %s after %d attempts, want %s after 2",
				r.res.Served.Profile, len(r.res.Attempts), profileWin)
		}
		failover, last = append(failover, ms(r.took)), r
	}
	b.raw["direct_winner_p50_ms"], b.raw["reply_failover_p50_ms"] = p(directWin, 50), p(failover, 50)
	return last, nil
}

// silent is the worst time to an answer (s) of two replies whose primary never sends a token: the
// first-token timeout, then the fallback.
func (b *bench) silent(ctx context.Context) (float64, error) {
	b.progress("silent primary: the first token never comes (first-token timeout %v)", b.opts.FirstTokenTimeout)
	worst := 0.0
	for range 2 {
		r, err := b.reply(ctx, agentSilent, "")
		if err != nil {
			return 0, err
		}
		if !r.servedBy(profileWin) {
			return 0, fmt.Errorf("a silent-primary reply was served by %s", r.res.Served.Profile)
		}
		worst = max(worst, r.took.Seconds())
	}
	return worst, nil
}
