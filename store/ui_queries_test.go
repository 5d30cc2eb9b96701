package store

import (
	"context"
	"testing"
	"time"

	"github.com/batonhq/baton/policy"
)

func TestTheOperatorPagesListings(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		if agents, err := s.AuthAgents(ctx); err != nil || len(agents) != 1 || agents[0] != "main" {
			t.Fatalf("an empty store: %v %v", agents, err)
		}
		if err := s.PutCredential(ctx, "ops", Credential{ID: "openai:ops", Provider: "openai", Type: "api_key", Key: "sk-x"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RecordOutcome(ctx, "beta", "openai:env", func(st policy.ProfileStats) policy.ProfileStats { return st }); err != nil {
			t.Fatal(err)
		}
		if err := s.PutCredential(ctx, "main", Credential{ID: "openai:a", Provider: "openai", Type: "api_key", Key: "sk-y"}); err != nil {
			t.Fatal(err)
		}
		agents, err := s.AuthAgents(ctx)
		if err != nil || len(agents) != 3 || agents[0] != "main" || agents[1] != "beta" || agents[2] != "ops" {
			t.Errorf("agents %v %v", agents, err)
		}

		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		over := policy.FallbackWrite(policy.SessionModel{}, policy.ModelRef{Provider: "anthropic", Model: "claude"},
			policy.ModelRef{Provider: "openai", Model: "gpt-5"}, "", now)
		for i, key := range []string{"plain", "fallback-old", "fallback-new"} {
			if _, err := s.UpdateSession(ctx, key, "main", now.Add(time.Duration(i)*time.Minute), func(sess *Session) error {
				if key != "plain" {
					sess.Model = over
				}
				sess.Notice.Selected = "openai/gpt-5"
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		list, err := s.OverriddenSessions(ctx, 10)
		if err != nil || len(list) != 2 || list[0].Key != "fallback-new" || list[1].Key != "fallback-old" || list[0].Model.ModelOverride != "claude" {
			t.Errorf("sessions %+v %v", list, err)
		}
		if list, err := s.OverriddenSessions(ctx, 1); err != nil || len(list) != 1 {
			t.Errorf("limit 1: %d %v", len(list), err)
		}
	})
}
