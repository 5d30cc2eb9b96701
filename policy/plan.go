package policy

import (
	"fmt"
	"time"
)

// ReplyPlan is where a reply starts: the chain it walks and the session as it first knows it.
type ReplyPlan struct {
	Chain   Chain
	Session SessionModel
	// ClearStale: a heartbeat found the session's auto override stale (cleared in Session; the
	// turn's end clears it in the store).
	ClearStale bool
}

// PlanReply builds a reply's chain from its request, the session as loaded, and when the auto
// override's origin was last re-probed. A session reply reads its override (an image reply does
// not); an explicit model is strict; a heartbeat without its own model clears an auto override
// that no longer fits; a due re-probe tries the origin first (not for cron jobs or an explicit
// model); a turn carrying images that no candidate of its chain accepts goes to the image chain,
// under its own rules (no session override read or written). An error names the bad field.
func PlanReply(cfg *Config, req Ask, session SessionModel, reprobed, now time.Time) (ReplyPlan, error) {
	plan := ReplyPlan{Session: session}
	creq := ChainRequest{Agent: req.Agent, FixedChain: req.FixedChain, Image: req.Image}
	if req.Session != "" && !req.Image {
		creq.Session = &plan.Session
	}
	if req.Model != "" {
		ref, err := ParseModelRef(req.Model)
		if err != nil {
			return plan, fmt.Errorf("model: %w", err)
		}
		creq.Explicit = ref
	}
	if hb := req.Heartbeat; hb != nil {
		own := ModelRef{}
		if hb.Model != "" {
			ref, err := ParseModelRef(hb.Model)
			if err != nil {
				return plan, fmt.Errorf("heartbeat model: %w", err)
			}
			own = ref
		} else if HeartbeatIsStale(plan.Session, cfg.AgentPrimary(req.Agent)) {
			plan.Session, plan.ClearStale = ClearAuto(plan.Session), true
		}
		creq.Heartbeat = &own
	}
	if _, due := ReprobeDue(plan.Session, reprobed, now); due && creq.FixedChain == nil && creq.Explicit.IsZero() {
		creq.Reprobe = true
	}
	chain, err := BuildChain(cfg, creq)
	if err == nil && req.CarriesImages && !chain.Image && ImageRoute(cfg, chain) {
		creq.Image, creq.Session, creq.Reprobe = true, nil, false
		chain, err = BuildChain(cfg, creq)
	}
	plan.Chain = chain
	return plan, err
}
