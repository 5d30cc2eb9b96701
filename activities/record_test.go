package activities

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/provider"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/sdk/testsuite"
)

// A successful attempt records its outcome and ends its turn in one transaction: both, or (a
// session row that does not decode) neither, the report then leaving both to the reply. Its
// answer is kept either way, with its spend.
func TestAnAttemptRecordsAndEndsItsTurnAllOrNothing(t *testing.T) {
	const secret = "sk-record-test-0123456789"
	acts, path := attemptsOn(t, []fakeprovider.Rule{
		{Match: fakeprovider.Match{}, Respond: []fakeprovider.Response{{Text: "recorded", Finish: "stop",
			Usage: &fakeprovider.Usage{Input: 12, Output: 3}}}},
	}, secret, "openai:work", "openai:other")
	st, ctx := acts.Store, context.Background()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO sessions (key, agent, data_json, version, updated_at_ms) VALUES ('spoilt', 'main', 'not json', 1, 0)`); err != nil {
		t.Fatal(err)
	}
	at := time.Now()

	for _, c := range []struct{ session, profile string }{{"fine", "openai:work"}, {"spoilt", "openai:other"}} {
		t.Run(c.session, func(t *testing.T) {
			whole := c.session == "fine"
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestActivityEnvironment()
			env.RegisterActivity(acts)
			key := "reply/" + c.session + "/run/1"
			val, err := env.ExecuteActivity(acts.Attempt, workflows.AttemptRequest{Agent: "main", Provider: "openai", Model: "gpt-5",
				Profile: c.profile, Message: "hi", Now: at, RetryMaxWait: time.Minute, Key: key,
				OnSuccess: &policy.TurnEnd{Session: c.session, Agent: "main"}})
			if err != nil {
				t.Fatal(err)
			}
			var out policy.AttemptOutcome
			if err := val.Get(&out); err != nil {
				t.Fatal(err)
			}
			if !out.OK || out.Text != "recorded" {
				t.Fatalf("outcome %+v", out)
			}
			if (out.Recorded != nil) != whole || out.TurnEnded != whole {
				t.Errorf("recorded %v, turn ended %v; want both %v", out.Recorded != nil, out.TurnEnded, whole)
			}
			stats, err := st.Stats(ctx, "main", c.profile)
			if err != nil {
				t.Fatal(err)
			}
			if stats.LastUsed.IsZero() == whole {
				t.Errorf("the profile's usage stats were written: %v, want %v (%+v)", !stats.LastUsed.IsZero(), whole, stats)
			}
			if whole {
				if _, err := st.GetSession(ctx, c.session); err != nil {
					t.Errorf("the turn ended on no session: %v", err)
				}
			}
			data, final, err := st.GetAttemptOutcome(ctx, key)
			if err != nil || !final {
				t.Fatalf("kept outcome: final %v, %v", final, err)
			}
			var kept policy.AttemptOutcome
			if err := json.Unmarshal(data, &kept); err != nil || kept.Text != "recorded" || (kept.Recorded != nil) != whole || kept.TurnEnded != whole {
				t.Errorf("kept %+v (%v)", kept, err)
			}
			var spent int
			if err := db.QueryRow(`SELECT COUNT(*) FROM spend WHERE key = ?`, key).Scan(&spent); err != nil || spent != 1 {
				t.Errorf("%d spend rows, %v", spent, err)
			}
		})
	}
}

// attemptsOn is Activities on a store of their own (at the path it returns) holding profiles, each
// with secret, whose openai provider is a fake answering by rules (which knows secret as the first
// profile's).
func attemptsOn(t *testing.T, rules []fakeprovider.Rule, secret string, profiles ...string) (*Activities, string) {
	t.Helper()
	fake := fakeprovider.New(rules, map[string]string{secret: profiles[0]})
	if err := fake.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	cfg := policy.DefaultConfig()
	cfg.Providers["openai"] = policy.ProviderConfig{ID: "openai", BaseURL: fake.BaseURL("openai", false), API: provider.APIOpenAICompletions}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "baton.db")
	st, err := store.Open(ctx, "sqlite://"+path, store.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, id := range profiles {
		if err := st.PutCredential(ctx, "main", store.Credential{ID: id, Provider: "openai", Type: "api_key", Key: secret}); err != nil {
			t.Fatal(err)
		}
	}
	return &Activities{Store: st, Config: StaticConfig(cfg), ServerUp: NoServer}, path
}
