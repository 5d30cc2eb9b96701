package ui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
)

var now = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

func TestProfileStates(t *testing.T) {
	cfg := policy.DefaultConfig()
	cfg.Profiles = []policy.ProfileConfig{{ID: "openai:oauth-only", Provider: "openai", Mode: "oauth"}}
	cases := []struct {
		name  string
		p     store.Profile
		state string
		check func(profileRow) bool
	}{
		{"available", prof("openai:a", policy.ProfileStats{LastUsed: now.Add(-time.Minute)}), "available",
			func(r profileRow) bool { return r.Until.IsZero() && r.Step == "" }},
		{"cooling down on one model", prof("openai:a", policy.ProfileStats{ErrorCount: 2, CooldownUntil: now.Add(4 * time.Minute),
			CooldownReason: policy.ReasonRateLimit, CooldownModel: "gpt-5", LastFailureAt: now.Add(-time.Minute)}), "cooldown",
			func(r profileRow) bool {
				return r.Model == "gpt-5" && r.Step == "step 2 of the cooldown ladder (5 min)" && r.LastFailureReason == policy.ReasonRateLimit
			}},
		{"an expired cooldown", prof("openai:a", policy.ProfileStats{ErrorCount: 1, CooldownUntil: now.Add(-time.Second),
			CooldownReason: policy.ReasonTimeout, LastFailureAt: now.Add(-2 * time.Minute)}), "available",
			func(r profileRow) bool {
				return r.Step == "1 recent failure(s): the next opens 5 min" && r.LastFailureReason == policy.ReasonTimeout
			}},
		{"disabled for billing", prof("openai:a", policy.ProfileStats{DisabledUntil: now.Add(5 * time.Hour), DisabledReason: policy.ReasonBilling,
			FailureCounts: map[policy.Reason]int{policy.ReasonBilling: 2}, CooldownUntil: now.Add(time.Minute), CooldownReason: policy.ReasonRateLimit}), "disabled",
			func(r profileRow) bool {
				return r.Reason == policy.ReasonBilling && strings.HasPrefix(r.Step, "step 2 of the disable (10 h") && strings.HasPrefix(r.Also, "also cooling down")
			}},
		{"a usage reset", prof("openai:a", policy.ProfileStats{BlockedUntil: now.Add(time.Hour), BlockedModel: "gpt-5"}), "blocked",
			func(r profileRow) bool { return r.Model == "gpt-5" }},
		{"left out by the config's mode", prof("openai:oauth-only", policy.ProfileStats{}), "manual",
			func(r profileRow) bool { return strings.Contains(r.StateLabel, "mode is oauth") }},
	}
	for _, c := range cases {
		r := profileState(c.p, "openai", cfg, now)
		if r.State != c.state || !c.check(r) {
			t.Errorf("%s: %+v", c.name, r)
		}
	}
}

func prof(id string, st policy.ProfileStats) store.Profile {
	return store.Profile{StoredProfile: policy.StoredProfile{ID: id, Provider: "openai", Type: policy.TypeAPIKey, Stats: st}, Source: "store"}
}

func TestTheReplyFilterBuildsAVisibilityQuery(t *testing.T) {
	f, q, err := readFilter(url.Values{"agent": {"main"}, "session": {"s 1"}, "reason": {"rate_limit"}, "outcome": {"fallback"}, "limit": {"20"}})
	if err != nil || f.Limit != 20 ||
		q != "WorkflowType = 'Reply' AND BatonAgent = 'main' AND BatonSession = 's 1' AND BatonFailoverReason = 'rate_limit' AND BatonUsedFallback = true" {
		t.Errorf("%q %+v %v", q, f, err)
	}
	for _, bad := range []url.Values{{"session": {"x' OR 1=1"}}, {"outcome": {"nope"}}, {"limit": {"0"}}, {"model": {`a\b`}}} {
		if _, _, err := readFilter(bad); err == nil {
			t.Errorf("%v: accepted", bad)
		}
	}
}

// The board from the store alone: profiles by agent and provider, the stored order leaving one
// out, a session on a fallback with its re-probe time.
func TestTheBoardFromTheStore(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "b.db"), store.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Keys no random nonce or id on the page could hold by chance (as "k1" could).
	for _, c := range []store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-board-secret-one"},
		{ID: "openai:b", Provider: "openai", Type: "api_key", Key: "sk-board-secret-two"}} {
		if err := st.PutCredential(ctx, "main", c); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.PutCredential(ctx, "ops", store.Credential{ID: "anthropic:ops", Provider: "anthropic", Type: "api_key", Key: "k3"}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetOrder(ctx, "main", "openai", []string{"openai:a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RecordOutcome(ctx, "main", "openai:a", func(s policy.ProfileStats) policy.ProfileStats {
		return policy.RecordFailure(s, policy.Outcome{Reason: policy.ReasonRateLimit, Model: "gpt-5", Provider: "openai"}, policy.DefaultCooldowns(), now.Add(-10*time.Second))
	}); err != nil {
		t.Fatal(err)
	}
	written := now.Add(-2 * time.Minute)
	next := policy.FallbackWrite(policy.SessionModel{}, policy.ModelRef{Provider: "anthropic", Model: "claude"}, policy.ModelRef{Provider: "openai", Model: "gpt-5"}, "anthropic:default", written)
	if _, err := st.UpdateSession(ctx, "s1", "main", written, func(s *store.Session) error {
		s.Model, s.FallbackReason = next, "rate_limit"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	h := New(Options{Store: st, Now: func() time.Time { return now }}).(*handler)
	agents, err := h.profiles(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range agents {
		for _, p := range a.Providers {
			for _, r := range p.Profiles {
				got = append(got, a.Agent+" "+p.Provider+" "+r.ID+" "+r.State)
			}
		}
	}
	want := "main openai openai:a cooldown|main openai openai:b manual|ops anthropic anthropic:ops available"
	if strings.Join(got, "|") != want {
		t.Errorf("profiles %q, want %q", strings.Join(got, "|"), want)
	}
	sessions, err := h.sessions(ctx, now)
	if err != nil || len(sessions) != 1 {
		t.Fatalf("%+v %v", sessions, err)
	}
	if s := sessions[0]; s.Active != "anthropic/claude" || s.Origin != "openai/gpt-5" || s.Why != "rate_limit" || s.Profile != "anthropic:default" ||
		!s.NextReprobe.Equal(written.Add(policy.ReprobeInterval)) || s.ReprobeDue {
		t.Errorf("session %+v", s)
	}

	// Served: no client is no crash, and the page says what is missing.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ui/", nil))
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, `data-auth-profile="openai:b" data-state="manual"`) || !strings.Contains(body, "no Temporal client") {
		t.Errorf("%d\n%s", rec.Code, body)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'nonce-") || !strings.Contains(body, `<script nonce="`) {
		t.Errorf("csp %q", csp)
	}
	if strings.Contains(body, "sk-board-secret") {
		t.Error("a secret on the page")
	}
}

func TestRoutes(t *testing.T) {
	h := New(Options{})
	for _, c := range []struct {
		method, path string
		code         int
	}{
		{http.MethodGet, "/ui/nope", http.StatusNotFound},
		{http.MethodPost, "/ui/", http.StatusMethodNotAllowed},
		{http.MethodGet, "/ui/reply", http.StatusBadRequest},
		{http.MethodGet, "/ui/reply?id=x", http.StatusServiceUnavailable},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if rec.Code != c.code {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, rec.Code, c.code)
		}
	}
}

func TestRequireToken(t *testing.T) {
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("board")) })
	if RequireToken("", inner) == nil {
		t.Fatal("nil handler")
	}
	h := RequireToken("s3cret", inner)
	do := func(r *http.Request) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}
	if rec := do(httptest.NewRequest(http.MethodGet, "/ui/", nil)); rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), `name="token"`) {
		t.Errorf("no token: %d %s", rec.Code, rec.Body.String())
	}
	r := httptest.NewRequest(http.MethodGet, "/ui/", nil)
	r.Header.Set("Authorization", "Bearer s3cret")
	if rec := do(r); rec.Code != http.StatusOK || rec.Body.String() != "board" {
		t.Errorf("bearer: %d", rec.Code)
	}
	bad := httptest.NewRequest(http.MethodPost, "/ui/login", strings.NewReader("token=wrong"))
	bad.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if rec := do(bad); rec.Code != http.StatusUnauthorized || len(rec.Result().Cookies()) != 0 {
		t.Errorf("wrong token: %d", rec.Code)
	}
	login := httptest.NewRequest(http.MethodPost, "/ui/login", strings.NewReader("token=s3cret"))
	login.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := do(login)
	cookies := rec.Result().Cookies()
	if rec.Code != http.StatusSeeOther || len(cookies) != 1 || cookies[0].Value == "s3cret" || !cookies[0].HttpOnly {
		t.Fatalf("sign in: %d %+v", rec.Code, cookies)
	}
	r = httptest.NewRequest(http.MethodGet, "/ui/", nil)
	r.AddCookie(cookies[0])
	if rec := do(r); rec.Code != http.StatusOK {
		t.Errorf("with the cookie: %d", rec.Code)
	}
	r = httptest.NewRequest(http.MethodGet, "/ui/", nil)
	r.AddCookie(&http.Cookie{Name: TokenCookie, Value: "s3cret"})
	if rec := do(r); rec.Code != http.StatusUnauthorized {
		t.Errorf("the token itself as the cookie: %d", rec.Code)
	}
}
