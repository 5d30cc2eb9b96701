package policy

import (
	"slices"
	"time"
)

// Credential types of stored profiles.
const (
	TypeAPIKey = "api_key"
	TypeOAuth  = "oauth"
	TypeToken  = "token"
	// The clouds' own credentials: an AWS access key pair (Bedrock), a Google service account's
	// JSON key (Vertex AI), and none at all: the cloud's credential chain on the host (AWS's
	// default chain, Google's application-default credentials).
	TypeAWSKeys        = "aws_keys"
	TypeServiceAccount = "service_account"
	TypeAmbient        = "ambient"
)

// CredentialTypes lists every type a profile may have.
var CredentialTypes = []string{TypeAPIKey, TypeOAuth, TypeToken, TypeAWSKeys, TypeServiceAccount, TypeAmbient}

// CredentialFits reports whether a profile of type typ can authenticate to a provider speaking
// api, and names the types that can when it cannot.
func CredentialFits(api, typ string) (bool, []string) {
	var fit []string
	switch api {
	case APIBedrockConverse:
		fit = []string{TypeAWSKeys, TypeAmbient, TypeAPIKey} // SigV4, or a Bedrock API key as a bearer
	case APIVertexAI:
		fit = []string{TypeServiceAccount, TypeAmbient, TypeToken, TypeOAuth}
	case APIGoogleGemini:
		fit = []string{TypeAPIKey}
	default:
		fit = []string{TypeAPIKey, TypeToken, TypeOAuth} // a key or a bearer (Azure: api-key or Entra ID)
	}
	return slices.Contains(fit, typ), fit
}

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
	// Stats are the profile's usage stats (in the caller's slice), for the decisions that follow.
	Stats *ProfileStats `json:"-"`
}

func typeScore(t string) int {
	switch t {
	case TypeOAuth:
		return 0
	case TypeToken:
		return 1
	case TypeAPIKey, TypeAWSKeys, TypeServiceAccount:
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
	// Small slices and linear scans: a reply orders a handful of profiles per candidate, and
	// this runs once per candidate per turn.
	ofProvider := func(i int) bool {
		p := in.Profiles[i].Provider
		return p == provider || NormalizeProvider(p) == provider
	}
	lookup := func(id string) (int, bool) {
		for i := range in.Profiles {
			if in.Profiles[i].ID == id && ofProvider(i) {
				return i, true
			}
		}
		return -1, false
	}
	mode := func(id string) string {
		if in.Config != nil {
			for _, pc := range in.Config.Profiles {
				if pc.ID == id {
					return pc.Mode
				}
			}
		}
		return ""
	}
	eligible := func(i int) bool {
		switch m := mode(in.Profiles[i].ID); m {
		case "":
			return true
		case TypeOAuth:
			return in.Profiles[i].Type == TypeOAuth || in.Profiles[i].Type == TypeToken
		case "aws-sdk": // OpenClaw's mode: the AWS SDK signs, from the host's chain or a stored pair
			return in.Profiles[i].Type == TypeAmbient || in.Profiles[i].Type == TypeAWSKeys
		default:
			return m == in.Profiles[i].Type
		}
	}
	var idx []int // indexes into in.Profiles, in base order
	addID := func(id string) {
		if i, ok := lookup(id); ok && eligible(i) && !slices.Contains(idx, i) {
			idx = append(idx, i)
		}
	}

	explicit := in.StoredOrder
	if len(explicit) == 0 && in.Config != nil {
		explicit = in.Config.AuthOrder[provider]
	}
	isExplicit := len(explicit) > 0
	if isExplicit {
		for _, id := range explicit {
			addID(id)
		}
	} else if in.Config != nil {
		for _, pc := range in.Config.Profiles {
			if pc.Provider == provider {
				addID(pc.ID)
			}
		}
	}
	if len(idx) == 0 {
		// Nothing named exists in the store (a renamed key, a fresh store): use what is stored.
		isExplicit = false
		for i := range in.Profiles {
			if ofProvider(i) && eligible(i) {
				idx = append(idx, i)
			}
		}
	}

	if in.UserPin && in.Pin != "" {
		if i, ok := lookup(in.Pin); ok {
			return []OrderedProfile{describe(&in.Profiles[i], provider, in.Model, in.Now)}
		}
	}

	out := make([]OrderedProfile, 0, len(idx))
	for _, i := range idx {
		out = append(out, describe(&in.Profiles[i], provider, in.Model, in.Now))
	}
	// Insertion sort: stable, allocation-free, and n is small.
	less := func(a, b int) bool {
		pa, pb := out[a], out[b]
		if pa.Available != pb.Available {
			return pa.Available
		}
		if !pa.Available {
			return pa.Until.Before(pb.Until) // cooling profiles: soonest expiry first
		}
		if isExplicit {
			return false // an explicit order is kept as given
		}
		sa, sb := &in.Profiles[idx[a]], &in.Profiles[idx[b]]
		if ta, tb := typeScore(sa.Type), typeScore(sb.Type); ta != tb {
			return ta < tb
		}
		if ea, eb := expired(sa, in.Now), expired(sb, in.Now); ea != eb {
			return !ea
		}
		if !sa.Stats.LastUsed.Equal(sb.Stats.LastUsed) {
			return sa.Stats.LastUsed.Before(sb.Stats.LastUsed)
		}
		return idx[a] < idx[b] // ties keep the stored order
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && less(j, j-1); j-- {
			out[j], out[j-1] = out[j-1], out[j]
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}

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

func describe(p *StoredProfile, provider, model string, now time.Time) OrderedProfile {
	until := unusableUntil(&p.Stats, provider, model, now)
	return OrderedProfile{ID: p.ID, Available: until.IsZero(), Until: until, Stats: &p.Stats}
}

func expired(p *StoredProfile, now time.Time) bool {
	return p.Type == TypeOAuth && !p.Expires.IsZero() && !now.Before(p.Expires)
}

// nextProfile is the profile a rotation moves to: the first available one of ordered not yet
// tried in this candidate ("" when none is left).
func nextProfile(ordered []OrderedProfile, tried map[string]bool) string {
	for _, op := range ordered {
		if op.Available && !tried[op.ID] {
			return op.ID
		}
	}
	return ""
}
