package bench

import (
	"context"
	"fmt"
)

// warmUp runs both paths a few times so that first-use costs (connections, caches) are not
// measured.
func (b *bench) warmUp(ctx context.Context) error {
	for range 3 {
		if _, err := b.direct(ctx, "alpha", profileHappy); err != nil {
			return err
		}
		if _, err := b.reply(ctx, agentHappy, b.session("warm")); err != nil {
			return err
		}
	}
	return nil
}

// happy times session replies answered by their primary against the same call made directly
// (raw direct_p50_ms, reply_happy_p50_ms), and gives the last reply.
func (b *bench) happy(ctx context.Context) (replied, error) {
	b.progress("happy path: %d direct calls and %d replies, interleaved", b.opts.Samples, b.opts.Samples)
	direct, happy, last, err := b.sideBySide(ctx, func() (replied, error) {
		r, err := b.reply(ctx, agentHappy, b.session("happy"))
		if err == nil && !r.servedBy(profileHappy) {
			err = fmt.Errorf("a happy reply was served by %s", r.res.Served.Profile)
		}
		return r, err
	})
	if err != nil {
		return replied{}, err
	}
	b.raw["direct_p50_ms"], b.raw["reply_happy_p50_ms"] = p(direct, 50), p(happy, 50)
	return last, nil
}
