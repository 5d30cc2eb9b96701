package policy

import (
	"testing"
	"time"
)

func TestWhichRepliesWriteAFallback(t *testing.T) {
	primary, fallback := ModelRef{"openai", "gpt-5"}, ModelRef{"anthropic", "claude"}
	chain := Chain{Candidates: []Candidate{{ModelRef: primary}, {ModelRef: fallback}}, Requested: primary}
	userChose := SessionModel{ProviderOverride: "openai", ModelOverride: "gpt-5", ModelOverrideSource: SourceUser}
	for _, tc := range []struct {
		name         string
		req          Ask
		chain        Chain
		index        int
		failedBefore bool
		session      SessionModel
		want         bool
	}{
		{"a session reply writes the fallback it moves to after a failure", Ask{Session: "s"}, chain, 1, true, SessionModel{}, true},
		{"the requested candidate is no fallback", Ask{Session: "s"}, chain, 0, false, SessionModel{}, false},
		{"a candidate reached only past text-only ones is no fallback", Ask{Session: "s"}, chain, 1, false, SessionModel{}, false},
		{"a reply without a session writes none", Ask{}, chain, 1, true, SessionModel{}, false},
		{"a cron job writes none", Ask{Session: "s", FixedChain: &FixedChain{Model: primary}}, chain, 1, true, SessionModel{}, false},
		{"a heartbeat writes none", Ask{Session: "s", Heartbeat: &HeartbeatRun{}}, chain, 1, true, SessionModel{}, false},
		{"the image chain writes none", Ask{Session: "s"}, Chain{Candidates: chain.Candidates, Requested: primary, Image: true}, 1, true, SessionModel{}, false},
		{"never over a user's choice", Ask{Session: "s"}, chain, 1, true, userChose, false},
	} {
		if got := WritesFallback(tc.req, tc.chain, tc.index, tc.failedBefore, tc.session); got != tc.want {
			t.Errorf("%s: WritesFallback = %v", tc.name, got)
		}
	}
}

func TestWhatATurnWritesAtItsEnd(t *testing.T) {
	primary, fallback := ModelRef{"openai", "gpt-5"}, ModelRef{"anthropic", "claude"}
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	failed := []Attempt{{Provider: "openai", Model: "gpt-5", Profile: "openai:a", Result: ResultFailed, Reason: ReasonRateLimit, At: at}}
	chain := func(source string) Chain {
		return Chain{Candidates: []Candidate{{ModelRef: primary}, {ModelRef: fallback}}, Requested: primary, Source: source}
	}
	onFallback := NoticeState{Selected: primary.String(), Active: fallback.String()}
	for _, tc := range []struct {
		name     string
		in       TurnEndInput
		wantNone bool
		want     TurnEnd
		notices  int
	}{
		{"a reply without a session writes nothing, and still shows its notice",
			TurnEndInput{Request: Ask{Agent: "main"}, Chain: chain(SelectConfiguredDefault), Served: fallback, Attempts: failed},
			true, TurnEnd{}, 1},
		{"the image chain writes nothing",
			TurnEndInput{Request: Ask{Agent: "main", Session: "s"}, Chain: Chain{Requested: primary, Image: true}, Served: primary},
			true, TurnEnd{}, 0},
		{"a session turn on its primary pins the profile and keeps an empty notice state",
			TurnEndInput{Request: Ask{Agent: "main", Session: "s"}, Chain: chain(SelectConfiguredDefault), Served: primary, Profile: "openai:a"},
			false, TurnEnd{Session: "s", Agent: "main", Pin: true, Provider: "openai", Profile: "openai:a", Notice: &NoticeState{}}, 0},
		{"a session turn on a fallback keeps the notice state and the reason that moved it",
			TurnEndInput{Request: Ask{Agent: "main", Session: "s"}, Chain: chain(SelectConfiguredDefault), Served: fallback, Profile: "anthropic:a", Attempts: failed},
			false, TurnEnd{Session: "s", Agent: "main", Pin: true, Provider: "anthropic", Profile: "anthropic:a", Notice: &onFallback,
				FallbackReason: string(ReasonRateLimit)}, 1},
		{"a sticky turn on the fallback shows no notice again",
			TurnEndInput{Request: Ask{Agent: "main", Session: "s"}, Chain: chain(SelectConfiguredDefault), Served: fallback, Profile: "anthropic:a", Attempts: failed, Notice: onFallback},
			false, TurnEnd{Session: "s", Agent: "main", Pin: true, Provider: "anthropic", Profile: "anthropic:a", Notice: &onFallback,
				FallbackReason: string(ReasonRateLimit)}, 0},
		{"a cron job pins but keeps no notice state, and compares with none",
			TurnEndInput{Request: Ask{Agent: "main", Session: "s", FixedChain: &FixedChain{Model: primary}}, Chain: chain(SelectCron), Served: fallback, Profile: "anthropic:a", Attempts: failed, Notice: onFallback},
			false, TurnEnd{Session: "s", Agent: "main", Pin: true, Provider: "anthropic", Profile: "anthropic:a"}, 1},
		{"a heartbeat compares with the stored notice state but keeps none",
			TurnEndInput{Request: Ask{Agent: "main", Session: "s", Heartbeat: &HeartbeatRun{}}, Chain: chain(SelectHeartbeat), Served: fallback, Profile: "anthropic:a", Attempts: failed, Notice: onFallback},
			false, TurnEnd{Session: "s", Agent: "main", Pin: true, Provider: "anthropic", Profile: "anthropic:a"}, 0},
		{"a heartbeat that found the auto override stale clears it",
			TurnEndInput{Request: Ask{Agent: "main", Session: "s", Heartbeat: &HeartbeatRun{}}, Chain: chain(SelectHeartbeat), Served: primary, Profile: "openai:a", ClearStale: true},
			false, TurnEnd{Session: "s", Agent: "main", Pin: true, Provider: "openai", Profile: "openai:a", ClearAuto: true}, 0},
		{"a re-probe whose origin answered records itself and clears the auto override",
			TurnEndInput{Request: Ask{Agent: "main", Session: "s"}, Chain: chain(SelectReprobe), Served: primary, Profile: "openai:a", Notice: onFallback},
			false, TurnEnd{Session: "s", Agent: "main", Pin: true, Provider: "openai", Profile: "openai:a", Notice: &NoticeState{}, Reprobed: true, ClearAuto: true}, 1},
		{"a re-probe whose origin failed again records itself and keeps the override",
			TurnEndInput{Request: Ask{Agent: "main", Session: "s"}, Chain: chain(SelectReprobe), Served: fallback, Profile: "anthropic:a", Attempts: failed, Notice: onFallback},
			false, TurnEnd{Session: "s", Agent: "main", Pin: true, Provider: "anthropic", Profile: "anthropic:a", Notice: &onFallback, Reprobed: true,
				FallbackReason: string(ReasonRateLimit)}, 0},
		{"a chain on an auto override that settled back on its origin clears it",
			TurnEndInput{Request: Ask{Agent: "main", Session: "s"}, Chain: chain(SelectAutoOverride), Served: primary, Profile: "openai:a"},
			false, TurnEnd{Session: "s", Agent: "main", Pin: true, Provider: "openai", Profile: "openai:a", Notice: &NoticeState{}, ClearAuto: true}, 0},
	} {
		end, notices := EndOfTurn(tc.in)
		if len(notices) != tc.notices {
			t.Errorf("%s: notices %q, want %d", tc.name, notices, tc.notices)
		}
		if tc.wantNone {
			if end != nil {
				t.Errorf("%s: writes %+v, want nothing", tc.name, *end)
			}
			continue
		}
		if end == nil {
			t.Errorf("%s: writes nothing", tc.name)
			continue
		}
		got, want := *end, tc.want
		if (got.Notice == nil) != (want.Notice == nil) || (got.Notice != nil && *got.Notice != *want.Notice) {
			t.Errorf("%s: notice state %v, want %v", tc.name, got.Notice, want.Notice)
		}
		got.Notice, want.Notice = nil, nil
		if got != want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, want)
		}
	}
}

func TestRotationMovesToTheNextAvailableProfileNotTried(t *testing.T) {
	ordered := []OrderedProfile{{ID: "p:a", Available: true}, {ID: "p:b", Available: false}, {ID: "p:c", Available: true}}
	for _, tc := range []struct {
		name  string
		tried map[string]bool
		want  string
	}{
		{"the first available profile comes first", map[string]bool{}, "p:a"},
		{"a profile in cooldown is passed over", map[string]bool{"p:a": true}, "p:c"},
		{"none is left once every available profile was tried", map[string]bool{"p:a": true, "p:c": true}, ""},
	} {
		if got := nextProfile(ordered, tc.tried); got != tc.want {
			t.Errorf("%s: nextProfile = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestTheLastFailedAttemptIsTheOneASuccessRecoveredFrom(t *testing.T) {
	attempts := []Attempt{{Profile: "a", Result: ResultFailed}, {Profile: "b", Result: ResultFailed}, {Profile: "c", Result: ResultSkipped}}
	if got := LastFailed(attempts); got == nil || got.Profile != "b" {
		t.Errorf("LastFailed = %+v, want b", got)
	}
	if got := LastFailed(attempts[2:]); got != nil {
		t.Errorf("LastFailed of skips only = %+v, want none", got)
	}
}

func TestTheSoonestCandidateBackIsTheEarliestExpiryInTheChain(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	chain := Chain{Candidates: []Candidate{{ModelRef: ModelRef{"openai", "gpt-5"}}, {ModelRef: ModelRef{"anthropic", "claude"}}}}
	profiles := []StoredProfile{
		{ID: "openai:a", Provider: "openai", Stats: ProfileStats{CooldownUntil: now.Add(5 * time.Minute)}},
		{ID: "anthropic:a", Provider: "Anthropic", Stats: ProfileStats{CooldownUntil: now.Add(time.Minute)}},
		{ID: "google:a", Provider: "google", Stats: ProfileStats{CooldownUntil: now.Add(time.Second)}}, // not in the chain
	}
	if got := SoonestBack(chain, profiles, now); !got.Equal(now.Add(time.Minute)) {
		t.Errorf("SoonestBack = %v, want in 1 min", got)
	}
	if got := SoonestBack(chain, nil, now); !got.IsZero() {
		t.Errorf("SoonestBack without profiles = %v, want zero", got)
	}
}
