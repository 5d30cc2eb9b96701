package policy

// Which replies write a session, and what a turn leaves on it.

// KeepsSession reports a reply whose turn end is written to its session: a session reply on its
// model chain (image chain replies read and write no session).
func KeepsSession(req Ask, chain Chain) bool {
	return req.Session != "" && !chain.Image
}

// WritesFallback reports whether the candidate at index is written to the session as its
// fallback override before it is tried: a session reply on its model chain (not a cron job, not
// a heartbeat) reaching a candidate other than the requested one because an earlier candidate
// failed or was unavailable (one reached only past text-only candidates is not a fallback), and
// never over a user's choice.
func WritesFallback(req Ask, chain Chain, index int, failedBefore bool, s SessionModel) bool {
	return KeepsSession(req, chain) && req.FixedChain == nil && req.Heartbeat == nil &&
		index > 0 && failedBefore && chain.Candidates[index].ModelRef != chain.Requested && CanWriteFallback(s)
}

// TurnEndInput is what a turn's end depends on: the reply, its chain, the candidate and profile
// that answered, every attempt before, the session's notice state as loaded, and whether a
// heartbeat found the session's auto override stale.
type TurnEndInput struct {
	Request    Ask
	Chain      Chain
	Served     ModelRef
	Profile    string
	Attempts   []Attempt
	Notice     NoticeState
	ClearStale bool
}

// EndOfTurn is what a turn answered by in.Served writes to its session (nil: a reply that keeps
// none) and the notices it shows. A session reply compares with and keeps its notice state; a
// heartbeat compares with it but keeps none; a cron job compares with none. The profile that
// served is pinned. A re-probe records itself and, when the origin answered, clears the auto
// override; so does a chain on an auto override that settled back on its origin.
func EndOfTurn(in TurnEndInput) (*TurnEnd, []string) {
	req, chain := in.Request, in.Chain
	prev := in.Notice
	if req.FixedChain != nil || req.Session == "" {
		prev = NoticeState{}
	}
	notices, next := Notices(prev, chain.Requested, in.Served, in.Attempts)
	if notices == nil {
		notices = []string{}
	}
	if !KeepsSession(req, chain) {
		return nil, notices
	}
	end := &TurnEnd{Session: req.Session, Agent: req.Agent, Pin: true, Provider: in.Served.Provider, Profile: in.Profile,
		ClearAuto: in.ClearStale}
	if req.FixedChain == nil && req.Heartbeat == nil {
		end.Notice = &next
		if in.Served != chain.Requested {
			end.FallbackReason = string(LastReason(in.Attempts))
		}
	}
	onOrigin := in.Served == chain.Requested
	if chain.Source == SelectReprobe {
		end.Reprobed = true
		end.ClearAuto = end.ClearAuto || onOrigin
	}
	if chain.Source == SelectAutoOverride && onOrigin {
		end.ClearAuto = true
	}
	return end, notices
}
