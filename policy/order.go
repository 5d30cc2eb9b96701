package policy

import (
	"sort"
	"time"
)

// Credential types of stored profiles.
const (
	TypeAPIKey = "api_key"
	TypeOAuth  = "oauth"
	TypeToken  = "token"
)

// StoredProfile is what the store knows of a profile, without its secret.
type StoredProfile struct {
	ID       string       `json:"id"`
	Provider string       `json:"provider"`
	Type     string       `json:"type"`
	Expires  time.Time    `json:"expires,omitzero"`
	Stats    ProfileStats `json:"stats"`
}

// OrderInput is everything profile order depends on.
type OrderInput struct {
	Provider string
	Model    string
	Now      time.Time
	Config   *Config
	// StoredOrder is the agent's stored order override for the provider (auth order set).
	StoredOrder []string
	// Profiles are all stored profiles, in the order they were stored.
	Profiles []StoredProfile
	// Pin is the session's profile for this provider (see SessionModel.ProfilePin).
	Pin     string
	UserPin bool
}

// OrderedProfile is one profile in the order to try, with its availability for the model.
type OrderedProfile struct {
	ID        string    `json:"id"`
	Available bool      `json:"available"`
	Until     time.Time `json:"until,omitzero"` // when it becomes usable, if not now
}

func typeScore(t string) int {
	switch t {
	case TypeOAuth:
		return 0
	case TypeToken:
		return 1
	case TypeAPIKey:
		return 2
	}
	return 3
}

// OrderProfiles returns the provider's profiles in the order to try them: explicit order (stored
// override first, then auth.order) as given; otherwise round robin by type (OAuth before API
// keys), then lastUsed oldest first, ties in stored order. Profiles in cooldown or disabled go last,
// soonest expiry first. The session's pin goes first while available; a user's pin is the only one.
func OrderProfiles(in OrderInput) []OrderedProfile {
	provider := NormalizeProvider(in.Provider)
	byID := map[string]StoredProfile{}
	storeIndex := map[string]int{}
	for i, p := range in.Profiles {
		if NormalizeProvider(p.Provider) == provider {
			byID[p.ID] = p
			storeIndex[p.ID] = i
		}
	}
	modes := map[string]string{}
	var configured []string
	if in.Config != nil {
		for _, pc := range in.Config.Profiles {
			if pc.Provider == provider {
				modes[pc.ID] = pc.Mode
				configured = append(configured, pc.ID)
			}
		}
	}
	eligible := func(id string) bool {
		p, ok := byID[id]
		if !ok {
			return false
		}
		switch mode := modes[id]; mode {
		case "":
			return true
		case TypeOAuth:
			return p.Type == TypeOAuth || p.Type == TypeToken
		default:
			return mode == p.Type
		}
	}

	explicit := in.StoredOrder
	if len(explicit) == 0 && in.Config != nil {
		explicit = in.Config.AuthOrder[provider]
	}
	var base []string
	isExplicit := len(explicit) > 0
	switch {
	case isExplicit:
		base = explicit
	case len(configured) > 0:
		base = configured
	}
	ids := filterUnique(base, eligible)
	if len(ids) == 0 && len(base) > 0 {
		// Nothing named exists in the store (a renamed key, a fresh store): use what is stored.
		isExplicit, base = false, nil
	}
	if base == nil {
		for _, p := range in.Profiles {
			if NormalizeProvider(p.Provider) == provider {
				base = append(base, p.ID)
			}
		}
		ids = filterUnique(base, eligible)
	}

	if in.UserPin && in.Pin != "" {
		if _, ok := byID[in.Pin]; ok {
			return []OrderedProfile{describe(byID[in.Pin], provider, in.Model, in.Now)}
		}
	}

	var available, cooling []OrderedProfile
	for _, id := range ids {
		op := describe(byID[id], provider, in.Model, in.Now)
		if op.Available {
			available = append(available, op)
		} else {
			cooling = append(cooling, op)
		}
	}
	if !isExplicit {
		sort.SliceStable(available, func(i, j int) bool {
			a, b := byID[available[i].ID], byID[available[j].ID]
			if ta, tb := typeScore(a.Type), typeScore(b.Type); ta != tb {
				return ta < tb
			}
			if ea, eb := expired(a, in.Now), expired(b, in.Now); ea != eb {
				return !ea
			}
			if !a.Stats.LastUsed.Equal(b.Stats.LastUsed) {
				return a.Stats.LastUsed.Before(b.Stats.LastUsed)
			}
			return storeIndex[a.ID] < storeIndex[b.ID]
		})
	}
	sort.SliceStable(cooling, func(i, j int) bool { return cooling[i].Until.Before(cooling[j].Until) })
	out := append(available, cooling...)

	if in.Pin != "" {
		for i, op := range out {
			if op.ID == in.Pin && op.Available {
				copy(out[1:i+1], out[:i])
				out[0] = op
				break
			}
		}
	}
	return out
}

func describe(p StoredProfile, provider, model string, now time.Time) OrderedProfile {
	until := UnusableUntil(p.Stats, provider, model, now)
	return OrderedProfile{ID: p.ID, Available: until.IsZero(), Until: until}
}

func expired(p StoredProfile, now time.Time) bool {
	return p.Type == TypeOAuth && !p.Expires.IsZero() && !now.Before(p.Expires)
}

func filterUnique(ids []string, keep func(string) bool) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if !seen[id] && keep(id) {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
