package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/batonhq/baton/policy"
)

// outage sends one reply every OutageEvery on one session while the primary answers 503, and
// counts the attempts on the primary (an attempt is one tried (candidate, profile): its
// same-candidate retries are inside it, as DESIGN.md counts them) and the calls that reached it.
func (b *bench) outage(ctx context.Context) (int, error) {
	b.progress("outage: the primary is down for %v while a reply arrives every %v", b.opts.Outage, b.opts.OutageEvery)
	before := b.callsTo("delta")
	session := b.session("outage")
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	attempts := 0
	tick := time.NewTicker(b.opts.OutageEvery)
	defer tick.Stop()
	end := time.Now().Add(b.opts.Outage)
	replies := 0
	for time.Now().Before(end) {
		replies++
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := b.reply(ctx, agentOutage, session)
			if err == nil && !r.servedBy(profileWin) {
				err = fmt.Errorf("an outage reply was served by %s", r.res.Served.Profile)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				firstErr = cmpOr(firstErr, err)
				return
			}
			for _, a := range r.res.Attempts {
				if a.Provider == "delta" && a.Result != policy.ResultSkipped {
					attempts++
				}
			}
		}()
		select {
		case <-tick.C:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	wg.Wait()
	if firstErr != nil {
		return 0, firstErr
	}
	b.raw["outage_replies"] = float64(replies)
	b.raw["outage_primary_calls"] = float64(b.callsTo("delta") - before)
	return attempts, nil
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func (b *bench) callsTo(providerID string) int {
	n := 0
	for _, c := range b.fake.Calls() {
		if c.Provider == providerID {
			n++
		}
	}
	return n
}
