package policy

import (
	"fmt"
	"testing"
	"time"
)

// One full decision pass as a reply makes it: for a chain of 5 candidates with 4 profiles each,
// order the profiles, check availability and decide. Goal: under 5 µs.
func BenchmarkDecisionPass(b *testing.B) {
	cfg := mustConfig(b, `{agents: {defaults: {model: {primary: "p0/m", fallbacks: ["p1/m", "p2/m", "p3/m", "p4/m"]}}}}`)
	now := t0.Add(time.Hour)
	ch, err := BuildChain(cfg, ChainRequest{Agent: "main"})
	if err != nil {
		b.Fatal(err)
	}
	var profiles []StoredProfile
	for p := 0; p < 5; p++ {
		for k := 0; k < 4; k++ {
			s := ProfileStats{LastUsed: t0.Add(time.Duration(k) * time.Minute)}
			if k < 3 { // most profiles cooling, so every branch is exercised
				s.CooldownUntil, s.CooldownReason, s.ErrorCount = now.Add(time.Duration(k+1)*time.Minute), ReasonRateLimit, 1
			}
			profiles = append(profiles, StoredProfile{ID: fmt.Sprintf("p%d:k%d", p, k), Provider: fmt.Sprintf("p%d", p), Type: TypeAPIKey, Stats: s})
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for idx, cand := range ch.Candidates {
			ordered := OrderProfiles(OrderInput{Provider: cand.Provider, Model: cand.Model, Now: now, Config: cfg, Profiles: profiles})
			_ = DecideCandidate(CandidateState{Candidate: cand.ModelRef, Index: idx, ChainLen: len(ch.Candidates), Profiles: ordered}, now)
		}
	}
}

// Classifying a typical 429 body, from the provider layer's parse of it to the reason. Goal:
// under 20 µs.
func BenchmarkClassify429(b *testing.B) {
	f := Failure{Provider: "openai", Status: 429,
		Body: `{"error":{"message":"Rate limit reached for gpt-5 in organization org-x on requests per min (RPM): Limit 500, Used 500.","type":"requests","code":"rate_limit_exceeded"}}`}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if Classify(parsed(f)) != ReasonRateLimit {
			b.Fatal("misclassified")
		}
	}
}
