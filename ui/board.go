package ui

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
)

// boardPage is the board: profiles, sessions on a fallback, recent replies.
type boardPage struct {
	Now         time.Time
	Agents      []agentBoard
	ProfilesErr string
	NoStore     bool
	Sessions    []sessionRow
	SessionsErr string
	Replies     repliesView
}

type agentBoard struct {
	Agent     string
	Providers []providerBoard
}

type providerBoard struct {
	Provider string
	Order    string // how its profiles are ordered
	Profiles []profileRow
}

// profileRow is one auth profile as an operator looks at it. Never a secret.
type profileRow struct {
	ID, Type, Source, Email string
	Expires                 time.Time
	// State is available, cooldown, blocked (a provider-reported usage reset), disabled (billing
	// or auth_permanent) or manual (left out of the auth order, or of the mode, by an operator).
	State, StateLabel string
	// Model is the model a model-scoped window holds ("" for the whole profile).
	Model  string
	Until  time.Time
	Reason policy.Reason
	// Step is where the profile is on its ladder: the cooldown (1 min, 5, 25, 1 h) or the
	// disable's doubling.
	Step string
	// Also names another active window than the one shown (a cooldown under a disable).
	Also              string
	ErrorCount        int
	LastFailureAt     time.Time
	LastFailureReason policy.Reason
	LastUsed          time.Time
	LastProbeAt       time.Time
}

// sessionRow is a session on an automatic fallback.
type sessionRow struct {
	Key, Agent       string
	Active, Profile  string
	Origin           string
	Since            time.Time
	Why              string
	LastReprobe      time.Time
	NextReprobe      time.Time
	ReprobeDue       bool
	Replies, Explain string // links
}

func (h *handler) board(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.ctx(r)
	defer cancel()
	now := h.o.Now().UTC()
	page := boardPage{Now: now}
	if h.o.Store == nil {
		page.NoStore = true
	} else {
		var err error
		if page.Agents, err = h.profiles(ctx, now); err != nil {
			page.ProfilesErr = errText(err)
		}
		if page.Sessions, err = h.sessions(ctx, now); err != nil {
			page.SessionsErr = errText(err)
		}
	}
	page.Replies = h.replies(ctx, r.URL.Query())
	h.render(w, http.StatusOK, "board", pageData{Title: "failover board", Refresh: 5, Page: page})
}

// profiles reads every agent's profiles with their state at now, by provider.
func (h *handler) profiles(ctx context.Context, now time.Time) ([]agentBoard, error) {
	cfg := h.config()
	agents, err := h.o.Store.AuthAgents(ctx)
	if err != nil {
		return nil, err
	}
	var out []agentBoard
	for _, agent := range agents {
		profiles, err := h.o.Store.ListAllProfiles(ctx, agent) // the manually disabled too
		if err != nil {
			return nil, fmt.Errorf("agent %s: %w", agent, err)
		}
		if len(profiles) == 0 {
			continue
		}
		orders, err := h.o.Store.Orders(ctx, agent)
		if err != nil {
			return nil, fmt.Errorf("agent %s: %w", agent, err)
		}
		ab := agentBoard{Agent: agent}
		byProvider := map[string]int{}
		for _, p := range profiles {
			provider := policy.NormalizeProvider(p.Provider)
			i, ok := byProvider[provider]
			if !ok {
				i = len(ab.Providers)
				byProvider[provider] = i
				ab.Providers = append(ab.Providers, providerBoard{Provider: provider})
			}
			ab.Providers[i].Profiles = append(ab.Providers[i].Profiles, profileState(p, provider, cfg, now))
		}
		for i := range ab.Providers {
			pb := &ab.Providers[i]
			explicit, source := orders[pb.Provider], "stored order (baton auth order set)"
			if len(explicit) == 0 {
				explicit, source = cfg.AuthOrder[pb.Provider], "auth.order in the config"
			}
			var ids []string
			for _, p := range pb.Profiles {
				ids = append(ids, p.ID)
			}
			named := slices.ContainsFunc(explicit, func(id string) bool { return slices.Contains(ids, id) })
			switch {
			case named:
				pb.Order = source + ": " + strings.Join(explicit, ", ")
				for j := range pb.Profiles {
					if p := &pb.Profiles[j]; !slices.Contains(explicit, p.ID) && p.State == "available" {
						p.State, p.StateLabel = "manual", "manually disabled: not in the "+strings.SplitN(source, " (", 2)[0]
					}
				}
			default:
				pb.Order = "round robin: OAuth before API keys, least recently used first"
			}
		}
		out = append(out, ab)
	}
	return out, nil
}

// profileState reads one profile's windows at now.
func profileState(p store.Profile, provider string, cfg *policy.Config, now time.Time) profileRow {
	st := p.Stats
	row := profileRow{ID: p.ID, Type: p.Type, Source: p.Source, Email: p.Email, Expires: p.Expires, State: "available",
		StateLabel: "available", ErrorCount: st.ErrorCount, LastFailureAt: st.LastFailureAt, LastUsed: st.LastUsed, LastProbeAt: st.LastProbeAt}
	active := func(t time.Time) bool { return !t.IsZero() && now.Before(t) }
	cd := cfg.Cooldowns
	ladder := func() string {
		n := max(st.ErrorCount, 1)
		return fmt.Sprintf("step %d of the cooldown ladder (%s)", n, shortStep(policy.CooldownStep(n)))
	}
	switch {
	case active(st.DisabledUntil):
		row.State, row.Until, row.Reason = "disabled", st.DisabledUntil, st.DisabledReason
		row.StateLabel = "disabled (" + string(st.DisabledReason) + ")"
		n := max(st.FailureCounts[st.DisabledReason], 1)
		base, maxStep := cd.BillingBackoffFor(provider), cd.BillingMax
		if st.DisabledReason == policy.ReasonAuthPermanent {
			base, maxStep = cd.AuthPermanentBackoff, cd.AuthPermanentMax
		}
		row.Step = fmt.Sprintf("step %d of the disable (%s, doubling to %s)", n, shortStep(policy.DisableStep(base, maxStep, n)), shortStep(maxStep))
		if active(st.CooldownUntil) {
			row.Also = "also cooling down until " + st.CooldownUntil.UTC().Format("15:04:05")
		}
	case active(st.CooldownUntil) && (!active(st.BlockedUntil) || !st.BlockedUntil.After(st.CooldownUntil)):
		row.State, row.Until, row.Reason, row.Model = "cooldown", st.CooldownUntil, st.CooldownReason, st.CooldownModel
		row.StateLabel = "cooling down"
		row.Step = ladder()
		if active(st.BlockedUntil) {
			row.Also = "usage blocked until " + st.BlockedUntil.UTC().Format("15:04:05")
		}
	case active(st.BlockedUntil):
		row.State, row.Until, row.Reason, row.Model = "blocked", st.BlockedUntil, policy.ReasonRateLimit, st.BlockedModel
		row.StateLabel = "cooling down (usage limit reset time)"
		if active(st.CooldownUntil) {
			row.Also = "cooling down until " + st.CooldownUntil.UTC().Format("15:04:05")
		}
	}
	if m := p.Manual; m != nil {
		// An operator's disable: in no chain until `baton auth enable`, whatever the ladder says.
		row.State, row.StateLabel = "manual", "manually disabled (baton auth disable)"
		if m.Note != "" {
			row.StateLabel += ": " + m.Note
		}
	}
	if row.State == "available" && st.ErrorCount > 0 {
		row.Step = fmt.Sprintf("%d recent failure(s): the next opens %s", st.ErrorCount, shortStep(policy.CooldownStep(st.ErrorCount+1)))
	}
	// The last failure's reason: the window it opened, the later one when both are recorded.
	switch {
	case st.DisabledReason != "" && (st.CooldownReason == "" || st.DisabledUntil.After(st.CooldownUntil)):
		row.LastFailureReason = st.DisabledReason
	case st.CooldownReason != "":
		row.LastFailureReason = st.CooldownReason
	default:
		best := 0
		for r, n := range st.FailureCounts {
			if n > best || (n == best && string(r) < string(row.LastFailureReason)) {
				row.LastFailureReason, best = r, n
			}
		}
	}
	if row.State == "available" {
		if m := profileMode(cfg, p.ID); m != "" && !modeFits(m, p.Type) {
			row.State, row.StateLabel = "manual", "manually disabled: the config's mode is "+m
		}
	}
	return row
}

func profileMode(cfg *policy.Config, id string) string {
	for _, pc := range cfg.Profiles {
		if pc.ID == id {
			return pc.Mode
		}
	}
	return ""
}

// modeFits mirrors policy.OrderProfiles: an oauth mode takes OAuth and token profiles.
func modeFits(mode, typ string) bool {
	if mode == policy.TypeOAuth {
		return typ == policy.TypeOAuth || typ == policy.TypeToken
	}
	return mode == typ
}

func shortStep(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return strconv.Itoa(int(d.Hours())) + " h"
	case d%time.Minute == 0:
		return strconv.Itoa(int(d.Minutes())) + " min"
	}
	return d.String()
}

// sessions lists the sessions on an automatic fallback, with when their origin is tried again.
func (h *handler) sessions(ctx context.Context, now time.Time) ([]sessionRow, error) {
	list, err := h.o.Store.OverriddenSessions(ctx, 200)
	if err != nil {
		return nil, err
	}
	var out []sessionRow
	for _, s := range list {
		m := s.Model
		if m.EffectiveOverrideSource() != policy.SourceAuto {
			continue
		}
		over, _ := m.Override()
		origin, hasOrigin := m.Origin()
		if hasOrigin && over == origin {
			continue
		}
		row := sessionRow{Key: s.Key, Agent: s.Agent, Active: over.String(), Since: m.ModelOverrideUpdatedAt, Why: s.FallbackReason,
			LastReprobe: s.LastReprobeAt, Replies: Prefix + "?session=" + urlQuery(s.Key)}
		if pin, _, ok := m.ProfilePin(over.Provider); ok {
			row.Profile = pin
		}
		if hasOrigin {
			row.Origin = origin.String()
			since := m.ModelOverrideUpdatedAt
			if s.LastReprobeAt.After(since) {
				since = s.LastReprobeAt
			}
			row.NextReprobe = since.Add(policy.ReprobeInterval)
			row.ReprobeDue = !now.Before(row.NextReprobe)
		}
		out = append(out, row)
	}
	return out, nil
}
