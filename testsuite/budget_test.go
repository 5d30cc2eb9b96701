package testsuite_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/batonhq/baton/config"
	"github.com/batonhq/baton/policy"
	"github.com/batonhq/baton/schedules"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/testsuite"
	"go.temporal.io/sdk/temporal"
)

// A cron job's runs spend against its daily budget: a run that would start over it does not
// start, and says why; the provider is not called for it.
func TestACronJobOverItsDailyBudgetDoesNotStart(t *testing.T) {
	// $0.10 an input token: each run of 10 input tokens costs $1.00; the budget is $1.50.
	src := `{agents: {defaults: {model: "openai/gpt-5"}},
		models: {providers: {openai: {models: [{id: "gpt-5", cost: {input: 100000, output: 0}}]}}},
		cron: {jobs: [{id: "digest", cron: "0 9 * * *", message: "the digest", budget: {perDay: 1.5}}]}}`
	w := testsuite.NewWorld(t, src, []store.Credential{{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-budget-a"}}, nil)
	cfg, err := config.ParseConfig([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	job := schedules.FromConfig(cfg)[0].Request
	if job.Job != "digest" || job.JobBudget == nil || job.JobBudget.PerDay != 1.5 {
		t.Fatalf("the schedule's request: %+v", job)
	}
	c := testsuite.Client(t)
	tq := testsuite.TaskQueue(t)
	testsuite.StartWorker(t, c, tq, w.Acts)

	for run := 1; run <= 2; run++ { // $0, then $1 spent: room both times
		_, res, err := reply(t, c, tq, job)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if res.Spend == nil || res.Spend.Cost != 1 || !res.Spend.Priced || res.Spend.Input != 10 ||
			res.Attempts[0].Spend == nil || *res.Attempts[0].Spend != *res.Spend {
			t.Fatalf("run %d spent %+v (attempt %+v), want $1.00 for 10 input tokens", run, res.Spend, res.Attempts[0].Spend)
		}
	}
	refused, _, err := reply(t, c, tq, job) // $2.00 spent of $1.50
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != policy.ErrBudgetExceeded ||
		!strings.Contains(appErr.Error(), "cron job digest has spent $2.0000 of its $1.50") || !strings.Contains(appErr.Error(), "this run did not start") {
		t.Fatalf("the third run: %v, want %s naming the job and its figures", err, policy.ErrBudgetExceeded)
	}
	var check policy.BudgetCheck
	if err := appErr.Details(&check); err != nil || check.Scope != "cron job digest" || check.Spent != 2 {
		t.Errorf("the error's details: %+v, %v", check, err)
	}
	// The refused run's history replays (workflows/testdata), and its budget branch with it.
	recordHistory(t, c, refused, "reply-budget-exceeded")
	if n := len(w.Fake.Calls()); n != 2 {
		t.Errorf("%d provider calls, want 2: the refused run calls nothing", n)
	}
	// The agent has no budget of its own: its other replies go on.
	other := job
	other.Job, other.JobBudget = "", nil
	if _, _, err := reply(t, c, tq, other); err != nil {
		t.Errorf("a reply of the same agent outside the job: %v", err)
	}
}
