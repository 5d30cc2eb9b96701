package policy

import "time"

// SessionState is a session's failover state: what replies read from a session and leave on it,
// and what /model, /new and /reset change. store.Session embeds it, so these JSON names are the
// stored ones.
type SessionState struct {
	Model                  SessionModel `json:"model"`
	LiveModelSwitchPending bool         `json:"liveModelSwitchPending,omitempty"`
	Notice                 NoticeState  `json:"notice"`
	// SkipMarks is the session's auth-failure skip cache (/new clears it).
	SkipMarks []SkipMark `json:"skipMarks,omitempty"`
	// FallbackReason is why the active fallback is active (for /status).
	FallbackReason string `json:"fallbackReason,omitempty"`
	// LastReprobeAt is when the origin of an auto override was last tried again.
	LastReprobeAt time.Time `json:"lastReprobeAt,omitzero"`
}

// ChooseModel is /model, the model picker and sessions.patch: the user's exact choice
// (UserChoice), and a live switch pending for a running reply (only a user's change marks one).
func (s SessionState) ChooseModel(ref ModelRef, profile string, now time.Time) SessionState {
	s.Model = UserChoice(s.Model, ref, profile, now)
	s.LiveModelSwitchPending = true
	return s
}

// Reset is /new, /reset and sessions.reset: auto model overrides, the profile pin, the compaction
// count, notice state, the fallback reason, the skip cache, a pending switch and the last re-probe
// go; a user's model override stays.
func (s SessionState) Reset() SessionState {
	return SessionState{Model: Reset(s.Model)}
}

// Compact records a compaction: the count moves on, which makes an auto profile pin stale.
func (s SessionState) Compact() SessionState {
	s.Model.CompactionCount++
	return s
}

// MarkSkip records a skip-cache mark at now: it replaces a mark for the same candidate and
// profile, and marks expired at now go.
func (s SessionState) MarkSkip(mark SkipMark, now time.Time) SessionState {
	marks := []SkipMark{mark}
	for _, m := range s.SkipMarks {
		if now.Before(m.Until) && !(m.Model == mark.Model && m.Profile == mark.Profile) {
			marks = append(marks, m)
		}
	}
	s.SkipMarks = marks
	return s
}

// EndTurn is what a finished turn leaves on the session: an auto override cleared (its origin
// answered, or a heartbeat found it stale), the new notice state and why the fallback is active
// (a sticky turn on the fallback names no new reason: the one that moved the session stands), the
// time of a re-probe, the profile that served pinned (never over a user's pin), and no pending
// switch.
func (s SessionState) EndTurn(e TurnEnd) SessionState {
	if e.ClearAuto {
		s.Model = ClearAuto(s.Model)
	}
	if e.Notice != nil {
		s.Notice = *e.Notice
		if e.FallbackReason != "" || e.Notice.Active == "" {
			s.FallbackReason = e.FallbackReason
		}
	}
	if e.Reprobed {
		s.LastReprobeAt = e.At
	}
	if e.Pin {
		s.Model = AutoPin(s.Model, e.Provider, e.Profile)
	}
	s.LiveModelSwitchPending = false
	return s
}

// MainAgent is the agent whose credentials every other agent inherits.
const MainAgent = "main"

// AuthAgent is whose auth store (profiles, usage stats, order) a reply of agent uses: its own,
// or the main agent's when it has no profiles of its own (ownProfiles == 0).
func AuthAgent(agent string, ownProfiles int) string {
	if ownProfiles == 0 && agent != MainAgent {
		return MainAgent
	}
	return agent
}
