package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/batonhq/baton/policy"
)

// LegacyAgent is what OpenClaw's legacy files hold for one agent.
type LegacyAgent struct {
	Credentials []Credential                   `json:"credentials"`
	Order       map[string][]string            `json:"order,omitempty"`
	LastGood    map[string]string              `json:"lastGood,omitempty"`
	Stats       map[string]policy.ProfileStats `json:"usageStats,omitempty"`
	// Skipped names credentials that cannot be imported, with why (a secret reference, say).
	Skipped []string `json:"skipped,omitempty"`
}

// LegacyImport is everything found under an OpenClaw state directory.
type LegacyImport struct {
	Agents map[string]*LegacyAgent `json:"agents"`
	Files  []string                `json:"files"`
}

func (li *LegacyImport) agent(id string) *LegacyAgent {
	if li.Agents[id] == nil {
		li.Agents[id] = &LegacyAgent{Order: map[string][]string{}, LastGood: map[string]string{}, Stats: map[string]policy.ProfileStats{}}
	}
	return li.Agents[id]
}

// ReadLegacy parses OpenClaw's legacy files under dir:
//
//	agents/<agentId>/agent/auth-profiles.json  secrets (and, in old versions, state)
//	agents/<agentId>/agent/auth-state.json     order, lastGood, usageStats
//	agent/auth-profiles.json                   the oldest layout, agent "main"
//	credentials/oauth.json                     {provider: {access, refresh, expires, email?, projectId?}}
//
// A file that does not parse is an error naming it; nothing is returned half-read.
func ReadLegacy(dir string) (*LegacyImport, error) {
	if info, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	} else if !info.IsDir() {
		return nil, fmt.Errorf("state dir %s is not a directory", dir)
	}
	li := &LegacyImport{Agents: map[string]*LegacyAgent{}}
	read := func(path, agent string, parse func(*LegacyAgent, []byte) error) error {
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := parse(li.agent(agent), data); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		li.Files = append(li.Files, path)
		return nil
	}
	if err := read(filepath.Join(dir, "agent", "auth-profiles.json"), "main", parseLegacyProfiles); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(filepath.Join(dir, "agents"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		base := filepath.Join(dir, "agents", e.Name(), "agent")
		if err := read(filepath.Join(base, "auth-profiles.json"), e.Name(), parseLegacyProfiles); err != nil {
			return nil, err
		}
		if err := read(filepath.Join(base, "auth-state.json"), e.Name(), parseLegacyState); err != nil {
			return nil, err
		}
	}
	if err := read(filepath.Join(dir, "credentials", "oauth.json"), "main", parseLegacyOAuth); err != nil {
		return nil, err
	}
	for id, a := range li.Agents {
		if len(a.Credentials) == 0 && len(a.Order) == 0 && len(a.LastGood) == 0 && len(a.Stats) == 0 && len(a.Skipped) == 0 {
			delete(li.Agents, id)
		}
	}
	return li, nil
}

// legacyState is the state part, in auth-state.json or (older) auth-profiles.json.
type legacyState struct {
	Order      map[string][]string         `json:"order"`
	LastGood   map[string]string           `json:"lastGood"`
	UsageStats map[string]legacyUsageStats `json:"usageStats"`
}

type legacyUsageStats struct {
	LastUsed       *float64       `json:"lastUsed"`
	ErrorCount     *float64       `json:"errorCount"`
	FailureCounts  map[string]int `json:"failureCounts"`
	LastFailureAt  *float64       `json:"lastFailureAt"`
	CooldownUntil  *float64       `json:"cooldownUntil"`
	CooldownReason string         `json:"cooldownReason"`
	CooldownModel  string         `json:"cooldownModel"`
	DisabledUntil  *float64       `json:"disabledUntil"`
	DisabledReason string         `json:"disabledReason"`
	BlockedUntil   *float64       `json:"blockedUntil"`
	BlockedModel   string         `json:"blockedModel"`
	LastProbeAt    *float64       `json:"lastProbeAt"`
}

// epochMS converts a legacy epoch-milliseconds field; non-finite or non-positive values are unset.
func epochMS(v *float64) time.Time {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) || *v <= 0 || *v > 1e15 {
		return time.Time{}
	}
	return time.UnixMilli(int64(*v)).UTC()
}

func (u legacyUsageStats) stats() policy.ProfileStats {
	st := policy.ProfileStats{
		LastUsed: epochMS(u.LastUsed), LastFailureAt: epochMS(u.LastFailureAt),
		CooldownUntil: epochMS(u.CooldownUntil), CooldownReason: policy.Reason(u.CooldownReason), CooldownModel: u.CooldownModel,
		DisabledUntil: epochMS(u.DisabledUntil), DisabledReason: policy.Reason(u.DisabledReason),
		BlockedUntil: epochMS(u.BlockedUntil), BlockedModel: u.BlockedModel, LastProbeAt: epochMS(u.LastProbeAt),
	}
	if u.ErrorCount != nil && *u.ErrorCount > 0 && *u.ErrorCount < 1e6 {
		st.ErrorCount = int(*u.ErrorCount)
	}
	for r, n := range u.FailureCounts {
		if n > 0 {
			if st.FailureCounts == nil {
				st.FailureCounts = map[policy.Reason]int{}
			}
			st.FailureCounts[policy.Reason(r)] = n
		}
	}
	return st
}

func (a *LegacyAgent) addState(st legacyState) {
	for p, ids := range st.Order {
		a.Order[policy.NormalizeProvider(p)] = ids
	}
	for p, id := range st.LastGood {
		a.LastGood[policy.NormalizeProvider(p)] = id
	}
	for id, u := range st.UsageStats {
		a.Stats[id] = u.stats()
	}
}

type legacyProfile struct {
	Type          string   `json:"type"`
	Provider      string   `json:"provider"`
	Key           string   `json:"key"`
	KeyRef        any      `json:"keyRef"`
	Access        string   `json:"access"`
	Refresh       string   `json:"refresh"`
	Token         string   `json:"token"`
	TokenRef      any      `json:"tokenRef"`
	Expires       *float64 `json:"expires"`
	Email         string   `json:"email"`
	ProjectID     string   `json:"projectId"`
	EnterpriseURL string   `json:"enterpriseUrl"`
}

func parseLegacyProfiles(a *LegacyAgent, data []byte) error {
	var file struct {
		Version  int                      `json:"version"`
		Profiles map[string]legacyProfile `json:"profiles"`
		legacyState
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return err
	}
	ids := make([]string, 0, len(file.Profiles))
	for id := range file.Profiles {
		ids = append(ids, id)
	}
	sort.Strings(ids) // JSON objects have no order; sorted keeps imports repeatable
	for _, id := range ids {
		p := file.Profiles[id]
		provider := policy.NormalizeProvider(p.Provider)
		if provider == "" {
			provider = policy.ProviderOfProfile(id)
		}
		if p.KeyRef != nil || p.TokenRef != nil {
			a.Skipped = append(a.Skipped, fmt.Sprintf("%s: a secret reference (keyRef/tokenRef) has no secret to import", id))
			continue
		}
		typ := p.Type
		if typ == "aws-sdk" {
			typ = policy.TypeAmbient // OpenClaw's aws-sdk profiles: the AWS credential chain, no stored secret
		}
		c := Credential{ID: id, Provider: provider, Type: typ, Key: p.Key, Access: p.Access, Refresh: p.Refresh, Token: p.Token,
			Expires: epochMS(p.Expires), Email: p.Email, ProjectID: p.ProjectID, EnterpriseURL: p.EnterpriseURL}
		if err := c.Validate(); err != nil {
			return fmt.Errorf("profiles.%s: %w", id, err)
		}
		a.Credentials = append(a.Credentials, c)
	}
	a.addState(file.legacyState)
	return nil
}

func parseLegacyState(a *LegacyAgent, data []byte) error {
	var st legacyState
	if err := json.Unmarshal(data, &st); err != nil {
		return err
	}
	a.addState(st)
	return nil
}

func parseLegacyOAuth(a *LegacyAgent, data []byte) error {
	var file map[string]legacyProfile
	if err := json.Unmarshal(data, &file); err != nil {
		return err
	}
	providers := make([]string, 0, len(file))
	for p := range file {
		providers = append(providers, p)
	}
	sort.Strings(providers)
	for _, p := range providers {
		o := file[p]
		provider := policy.NormalizeProvider(p)
		c := Credential{ID: DefaultProfileID(provider, o.Email), Provider: provider, Type: policy.TypeOAuth,
			Access: o.Access, Refresh: o.Refresh, Expires: epochMS(o.Expires), Email: o.Email, ProjectID: o.ProjectID}
		if err := c.Validate(); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		// A profile already in an agent's auth-profiles.json wins over the older oauth.json.
		if !hasCredential(a.Credentials, c.ID) {
			a.Credentials = append(a.Credentials, c)
		}
	}
	return nil
}

func hasCredential(list []Credential, id string) bool {
	for _, c := range list {
		if c.ID == id {
			return true
		}
	}
	return false
}

// Describe lists what an import would write, one line each, without secrets.
func (li *LegacyImport) Describe() []string {
	var lines []string
	agents := make([]string, 0, len(li.Agents))
	for id := range li.Agents {
		agents = append(agents, id)
	}
	sort.Strings(agents)
	for _, id := range agents {
		a := li.Agents[id]
		for _, c := range a.Credentials {
			lines = append(lines, fmt.Sprintf("agent %s: profile %s (%s)", id, c.ID, c.Type))
		}
		for _, p := range slices.Sorted(maps.Keys(a.Order)) {
			lines = append(lines, fmt.Sprintf("agent %s: order %s = %s", id, p, strings.Join(a.Order[p], ", ")))
		}
		for _, p := range slices.Sorted(maps.Keys(a.LastGood)) {
			lines = append(lines, fmt.Sprintf("agent %s: lastGood %s = %s", id, p, a.LastGood[p]))
		}
		for _, pid := range slices.Sorted(maps.Keys(a.Stats)) {
			lines = append(lines, fmt.Sprintf("agent %s: usage stats of %s", id, pid))
		}
		for _, s := range a.Skipped {
			lines = append(lines, fmt.Sprintf("agent %s: skipped %s", id, s))
		}
	}
	return lines
}

// ImportLegacy writes everything in li in one transaction: all of it or none. Running it again
// writes the same rows again (idempotent).
func (s *Store) ImportLegacy(ctx context.Context, li *LegacyImport) error {
	return s.write(ctx, func(t *tx) error {
		for _, agent := range slices.Sorted(maps.Keys(li.Agents)) {
			a := li.Agents[agent]
			for _, c := range a.Credentials {
				if err := s.putCredential(ctx, t, agent, c); err != nil {
					return fmt.Errorf("agent %s profile %s: %w", agent, c.ID, err)
				}
			}
			for _, p := range slices.Sorted(maps.Keys(a.Order)) {
				if err := setOrder(ctx, t, agent, p, a.Order[p]); err != nil {
					return err
				}
			}
			for _, p := range slices.Sorted(maps.Keys(a.LastGood)) {
				if err := setLastGood(ctx, t, agent, p, a.LastGood[p]); err != nil {
					return err
				}
			}
			for _, id := range slices.Sorted(maps.Keys(a.Stats)) {
				data, err := json.Marshal(a.Stats[id])
				if err != nil {
					return err
				}
				if _, err := t.exec(ctx, `INSERT INTO auth_stats (agent, profile_id, stats_json) VALUES (?, ?, ?)
					ON CONFLICT (agent, profile_id) DO UPDATE SET stats_json = excluded.stats_json`, agent, id, string(data)); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
