package testsuite_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/batonhq/baton/lab/fakeprovider"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	"github.com/batonhq/baton/workflows"
	"go.temporal.io/sdk/client"
)

// Fifty replies failing on one profile at once climb the ladder exactly one step, on SQLite and on
// PostgreSQL: one outage, one cooldown.
func TestFiftyConcurrentRepliesLeaveOneLadderStep(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			url := "sqlite://" + t.TempDir() + "/baton.db"
			if backend == "postgres" {
				url = testsuite.FreshPostgres(t)
			}
			w := testsuite.NewWorldOn(t, url, `{agents: {defaults: {model: "openai/gpt-5"}}}`,
				[]store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-fifty-a"}},
				[]fakeprovider.Rule{{Respond: []fakeprovider.Response{{Status: 401, Body: `{"error":{"message":"Incorrect API key provided"}}`}}}})
			c := testsuite.Client(t)
			tq := testsuite.TaskQueue(t)
			testsuite.StartWorker(t, c, tq, w.Acts)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			start := time.Now()
			var wg sync.WaitGroup
			for i := 0; i < 50; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: tq}, workflows.ReplyWorkflowName,
						workflows.ReplyRequest{Agent: "main", Message: "hi", NoJitter: true})
					if err != nil {
						t.Error(err)
						return
					}
					_ = run.Get(ctx, nil) // every one fails: the key is bad
				}()
			}
			wg.Wait()
			st, err := w.Store.Stats(ctx, "main", "openai:a")
			if err != nil {
				t.Fatal(err)
			}
			if st.ErrorCount != 1 || st.CooldownReason != policy.ReasonAuth || st.CooldownUntil.Sub(st.LastFailureAt) != time.Minute ||
				st.CooldownUntil.Before(start.Add(time.Minute-time.Second)) {
				t.Errorf("after 50 concurrent failures: %+v", st)
			}
			if n := len(w.Fake.Calls()); n < 1 || n > 50 {
				t.Errorf("%d provider calls", n)
			}
		})
	}
}
