package scenario

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonhq/baton/activities"
	"github.com/batonhq/baton/config"
	"github.com/batonhq/baton/lab"
	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/workflows"
)

// Issue 26, "one probe per outage", through the real workflow and activities on the scenario
// clock: stateless job-primary replies (serve's provider/model requests: no session, a cron
// payload) whose primary and fallback share one key, 4 s apart during a 60 s run of 503 on the
// primary. At most 5 primary calls (the first reply's call and two retries in place, then one
// probe per 30 s throttle window), every reply without a probe answered by the fallback at once,
// and the primary serving again within 30 s of its recovery.
func TestStatelessRepliesProbeADeadPrimaryOncePerThrottleWindow(t *testing.T) {
	const (
		outageLasts = 60 * time.Second
		every       = 4 * time.Second
		during      = 15 // replies during the outage
	)
	for _, tc := range []struct {
		name   string
		outage fakeprovider.Response
	}{
		{"503 empty", fakeprovider.Response{Status: 503}},
		{"503 html", fakeprovider.Response{Status: 503, Body: "<html><head><title>503 Service Temporarily Unavailable</title></head><body><h1>503 Service Temporarily Unavailable</h1></body></html>"}},
		{"503 overloaded", fakeprovider.Response{Status: 503, Body: `{"error":{"message":"The server is overloaded, please try again later.","type":"server_error","code":"overloaded"}}`}},
		{"503 retry-after 1", fakeprovider.Response{Status: 503, Headers: map[string]string{"retry-after": "1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			turns, calls := playOutage(t, tc.outage, outageLasts, every)
			recovered := turns[0].at.Add(outageLasts)
			primary := 0
			for _, c := range calls {
				if c.Model == "gpt-5" && c.At.Before(recovered) {
					primary++
				}
			}
			var lines []string
			for i, tr := range turns {
				lines = append(lines, fmt.Sprintf("%2d at +%-4v took %-5v primary calls %d, served by %s", i, tr.at.Sub(turns[0].at), tr.took, tr.primaryCalls, tr.served))
			}
			t.Logf("primary calls during the outage: %d\n%s", primary, strings.Join(lines, "\n"))
			if primary > 5 {
				t.Errorf("%d primary calls during the 60 s outage, want at most 5", primary)
			}
			for i, tr := range turns[:during] {
				if tr.served != "gpt-5-mini" {
					t.Errorf("turn %d was served by %q during the outage", i, tr.served)
				}
				if i > 0 && tr.primaryCalls > 1 {
					t.Errorf("turn %d called the primary %d times: a probe is one call", i, tr.primaryCalls)
				}
				if i > 0 && tr.primaryCalls == 0 && tr.took != 0 {
					t.Errorf("turn %d carried no probe and took %v: the fallback was not tried at once", i, tr.took)
				}
			}
			if back := turns[len(turns)-1]; back.served != "gpt-5" || back.at.Add(back.took).Sub(recovered) > 30*time.Second {
				t.Errorf("the primary was not back within 30 s of its recovery")
			}
		})
	}
}

type playedTurn struct {
	at           time.Time
	took         time.Duration
	primaryCalls int
	served       string
}

// playOutage plays a stateless job-primary reply every `every`: while the primary answers outage
// (for `lasts`), then until it answers one (at most 30 s more).
func playOutage(t *testing.T, outage fakeprovider.Response, lasts, every time.Duration) ([]playedTurn, []fakeprovider.Call) {
	t.Helper()
	ctx := context.Background()
	cfg, err := config.ParseConfig([]byte(`{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["openai/gpt-5-mini"]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "baton.db"), store.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cred := store.Credential{ID: "openai:default", Provider: "openai", Type: "api_key", Key: "sk-one"}
	if err := st.PutCredential(ctx, agentDefault, cred); err != nil {
		t.Fatal(err)
	}
	fallback := fakeprovider.Rule{Match: fakeprovider.Match{Model: "gpt-5-mini"}, Respond: []fakeprovider.Response{{Text: "from the fallback"}}}
	fake := fakeprovider.New([]fakeprovider.Rule{{Match: fakeprovider.Match{Model: "gpt-5"}, Respond: []fakeprovider.Response{outage}}, fallback},
		map[string]string{"sk-one": cred.ID})
	var clockMu sync.Mutex
	var now func() time.Time
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fake.Now = func() time.Time {
		clockMu.Lock()
		defer clockMu.Unlock()
		if now == nil {
			return start
		}
		return now()
	}
	if err := fake.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	lab.PointAtFake(cfg, fake, []store.Credential{cred})
	src := &activities.ConfigSource{}
	src.Set(cfg)
	acts := &activities.Activities{Identity: "test", Store: st, Config: src, Limits: activities.DefaultLimits(), Now: fake.Now, ServerUp: activities.NoServer}

	gpt5, mini := policy.ModelRef{Provider: "openai", Model: "gpt-5"}, policy.ModelRef{Provider: "openai", Model: "gpt-5-mini"}
	var turns []playedTurn
	recovered := false
	for i := 0; ; i++ {
		at := start.Add(time.Duration(i) * every)
		if !recovered && !at.Before(start.Add(lasts)) {
			fake.SetRules([]fakeprovider.Rule{{Match: fakeprovider.Match{Model: "gpt-5"}, Respond: []fakeprovider.Response{{Text: "from the primary"}}}, fallback})
			recovered = true
		}
		// serve's provider/model request: a job primary with the caller's fallbacks, no session.
		req := workflows.ReplyRequest{Agent: agentDefault, Message: "hi", NoJitter: true,
			FixedChain: &policy.FixedChain{Model: gpt5, HasFallbacks: true, Fallbacks: []policy.ModelRef{mini}}}
		first := len(fake.Calls())
		env, err := playReply(ctx, st, fake, acts, &clockMu, &now, at, req, &ReplyTurn{})
		if err != nil {
			t.Fatal(err)
		}
		if err := env.GetWorkflowError(); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		var res policy.ReplyResult
		if err := env.GetWorkflowResult(&res); err != nil {
			t.Fatal(err)
		}
		tr := playedTurn{at: at, took: env.Now().Sub(at), served: res.Served.Model}
		for _, c := range fake.Calls()[first:] {
			if c.Model == "gpt-5" {
				tr.primaryCalls++
			}
		}
		turns = append(turns, tr)
		if recovered && (tr.served == "gpt-5" || at.Sub(start.Add(lasts)) > 30*time.Second) {
			return turns, fake.Calls()
		}
	}
}
