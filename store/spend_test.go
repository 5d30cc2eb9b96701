package store

import (
	"testing"
	"time"

	"github.com/batonhq/baton/policy"
)

func TestSpendSumsByAgentJobDayAndReply(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *Store) {
		day := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
		priced := func(in, out int64, usd float64) policy.Spend {
			return policy.Spend{Input: in, Output: out, Cost: usd, Priced: true}
		}
		rows := []SpendRow{
			{Key: "r1/run/1", Reply: "r1", Agent: "main", Job: "digest", Provider: "anthropic", Model: "claude", At: day, Spend: priced(1000, 50, 0.0035)},
			{Key: "r1/run/2", Reply: "r1", Agent: "main", Job: "digest", Provider: "bedrock", Model: "claude", At: day.Add(time.Minute), Spend: priced(1000, 200, 0.006)},
			{Key: "r2/run/1", Reply: "r2", Agent: "main", Provider: "openai", Model: "gpt", At: day.Add(2 * time.Hour), Spend: policy.Spend{Input: 10, Output: 5}},
			{Key: "r3/run/1", Reply: "r3", Agent: "main", Job: "digest", Provider: "openai", Model: "gpt", At: day.Add(-10 * time.Hour), Spend: priced(1, 1, 9)}, // the day before
			{Key: "r4/run/1", Reply: "r4", Agent: "ops", Provider: "openai", Model: "gpt", At: day, Spend: priced(1, 1, 1)},
		}
		for _, r := range rows {
			if err := s.RecordSpend(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		// The same call recorded again (an attempt run again after a lost worker) counts once.
		if err := s.RecordSpend(ctx, rows[0]); err != nil {
			t.Fatal(err)
		}
		job, err := s.SpentOn(ctx, "main", "digest", day)
		if err != nil || job.Input != 2000 || job.Output != 250 || job.Cost != 0.0095 || !job.Priced {
			t.Errorf("the job's day = %+v, %v; want 2000 in, 250 out, $0.0095", job, err)
		}
		agent, err := s.SpentOn(ctx, "main", "", day)
		if err != nil || agent.Input != 2010 || agent.Cost != 0.0095 {
			t.Errorf("the agent's day = %+v, %v; want 2010 in, $0.0095", agent, err)
		}
		none, err := s.SpentOn(ctx, "nobody", "", day)
		if err != nil || !none.IsZero() {
			t.Errorf("an agent that spent nothing = %+v, %v", none, err)
		}
		by, err := s.SpendOfReplies(ctx, []string{"r1", "r2", "r9"})
		if err != nil || by["r1"].Cost != 0.0095 || by["r1"].Output != 250 || by["r2"].Priced || by["r2"].Input != 10 || len(by) != 2 {
			t.Errorf("by reply = %+v, %v", by, err)
		}
	})
}
