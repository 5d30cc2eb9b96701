package policy

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

var (
	sessT0  = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	gpt5    = ModelRef{"openai", "gpt-5"}
	claude  = ModelRef{"anthropic", "claude"}
	gemini  = ModelRef{"google", "gemini"}
	counted = func(n int) *int { return &n }
)

// onAuto is a session a fallback moved from openai/gpt-5 to anthropic/claude, pinned to the
// profile that served, after two compactions.
var onAuto = SessionModel{ProviderOverride: "anthropic", ModelOverride: "claude", ModelOverrideSource: SourceAuto,
	AuthProfileOverride: "anthropic:a", AuthProfileOverrideSource: SourceAuto, AuthProfileOverrideCompactionCount: counted(2),
	ModelOverrideFallbackOriginProvider: "openai", ModelOverrideFallbackOriginModel: "gpt-5",
	ModelOverrideUpdatedAt: sessT0.Add(-time.Hour), CompactionCount: 2}

// onUser is a session on the user's /model google/gemini@google:work.
var onUser = SessionModel{ProviderOverride: "google", ModelOverride: "gemini", ModelOverrideSource: SourceUser,
	AuthProfileOverride: "google:work", AuthProfileOverrideSource: SourceUser, AuthProfileOverrideCompactionCount: counted(1),
	ModelOverrideUpdatedAt: sessT0.Add(-time.Hour), CompactionCount: 1}

func TestUserChoice(t *testing.T) {
	for _, c := range []struct {
		name    string
		session SessionModel
		ref     ModelRef
		profile string
		want    SessionModel
	}{
		{"/model on a new session is an exact choice: source user, written now", SessionModel{}, gpt5, "",
			SessionModel{ProviderOverride: "openai", ModelOverride: "gpt-5", ModelOverrideSource: SourceUser, ModelOverrideUpdatedAt: sessT0}},
		{"/model over a fallback's override: the fallback origin goes, and the pin for the fallback's provider", onAuto, gpt5, "",
			SessionModel{ProviderOverride: "openai", ModelOverride: "gpt-5", ModelOverrideSource: SourceUser, ModelOverrideUpdatedAt: sessT0, CompactionCount: 2}},
		{"/model to the provider of the auto pin keeps the pin as a preference", onAuto, ModelRef{"anthropic", "claude-opus"}, "",
			SessionModel{ProviderOverride: "anthropic", ModelOverride: "claude-opus", ModelOverrideSource: SourceUser,
				AuthProfileOverride: "anthropic:a", AuthProfileOverrideSource: SourceAuto, AuthProfileOverrideCompactionCount: counted(2),
				ModelOverrideUpdatedAt: sessT0, CompactionCount: 2}},
		{"/model …@profile pins the profile as the user's, at the session's compaction count", onAuto, gpt5, "openai:b",
			SessionModel{ProviderOverride: "openai", ModelOverride: "gpt-5", ModelOverrideSource: SourceUser,
				AuthProfileOverride: "openai:b", AuthProfileOverrideSource: SourceUser, AuthProfileOverrideCompactionCount: counted(2),
				ModelOverrideUpdatedAt: sessT0, CompactionCount: 2}},
		{"another explicit profile replaces the user's pin", onUser, gemini, "google:home",
			SessionModel{ProviderOverride: "google", ModelOverride: "gemini", ModelOverrideSource: SourceUser,
				AuthProfileOverride: "google:home", AuthProfileOverrideSource: SourceUser, AuthProfileOverrideCompactionCount: counted(1),
				ModelOverrideUpdatedAt: sessT0, CompactionCount: 1}},
		{"another model of the same provider keeps the user's pin", onUser, ModelRef{"google", "gemini-pro"}, "",
			SessionModel{ProviderOverride: "google", ModelOverride: "gemini-pro", ModelOverrideSource: SourceUser,
				AuthProfileOverride: "google:work", AuthProfileOverrideSource: SourceUser, AuthProfileOverrideCompactionCount: counted(1),
				ModelOverrideUpdatedAt: sessT0, CompactionCount: 1}},
		{"a user's pin no longer matching the provider goes", onUser, claude, "",
			SessionModel{ProviderOverride: "anthropic", ModelOverride: "claude", ModelOverrideSource: SourceUser, ModelOverrideUpdatedAt: sessT0, CompactionCount: 1}},
		{"a profile of another provider is never pinned", onUser, claude, "google:home",
			SessionModel{ProviderOverride: "anthropic", ModelOverride: "claude", ModelOverrideSource: SourceUser, ModelOverrideUpdatedAt: sessT0, CompactionCount: 1}},
		{"a legacy override (no source) becomes the user's", SessionModel{ModelOverride: "openai/gpt-4"}, gpt5, "",
			SessionModel{ProviderOverride: "openai", ModelOverride: "gpt-5", ModelOverrideSource: SourceUser, ModelOverrideUpdatedAt: sessT0}},
		{"clearing the override (sessions.patch model \"\") goes back to the default; the pin stays", onUser, ModelRef{}, "",
			SessionModel{AuthProfileOverride: "google:work", AuthProfileOverrideSource: SourceUser, AuthProfileOverrideCompactionCount: counted(1),
				ModelOverrideUpdatedAt: sessT0, CompactionCount: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := clone(c.session)
			got := UserChoice(c.session, c.ref, c.profile, sessT0)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("UserChoice(%s@%s)\n got %+v\nwant %+v", c.ref, c.profile, got, c.want)
			}
			if !reflect.DeepEqual(c.session, before) {
				t.Errorf("UserChoice changed its input: %+v", c.session)
			}
			if c.ref.IsZero() {
				return
			}
			// Whatever the session held, the choice is the user's: strict, never written over by
			// a fallback, never re-probed.
			if over, ok := got.Override(); !ok || over != c.ref || got.EffectiveOverrideSource() != SourceUser || CanWriteFallback(got) {
				t.Errorf("not the user's exact choice: %+v", got)
			}
			if _, due := ReprobeDue(got, time.Time{}, sessT0.Add(time.Hour)); due {
				t.Error("a user's choice is re-probed")
			}
			if got.AuthProfileOverride != "" && ProviderOfProfile(got.AuthProfileOverride) != c.ref.Provider {
				t.Errorf("a pin for another provider than the choice's: %+v", got)
			}
		})
	}
}

func TestCheckUserChoice(t *testing.T) {
	for _, c := range []struct {
		name    string
		ref     ModelRef
		profile string
		want    string
	}{
		{"no profile", gpt5, "", ""},
		{"a profile of the model's provider", gpt5, "openai:b", ""},
		{"a profile of another provider is refused, named", gpt5, "anthropic:x", `profile "anthropic:x" is not a openai profile`},
		{"clearing the model with a profile", ModelRef{}, "openai:b", ""},
	} {
		err := CheckUserChoice(c.ref, c.profile)
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func TestTheFallbackOwnedFieldsAreEverySessionModelFieldButTheCompactionCount(t *testing.T) {
	var m SessionModel
	owned := map[string]bool{}
	for _, f := range fallbackOwned {
		owned[f.name] = true
		sameField(f.field(&m), f.field(&m)) // a type it cannot compare panics
		setField(f.field(&m), f.field(&m))
	}
	typ := reflect.TypeOf(m)
	for i := 0; i < typ.NumField(); i++ {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		for _, f := range fallbackOwned {
			if f.name == name && reflect.ValueOf(f.field(&m)).Pointer() != reflect.ValueOf(&m).Elem().Field(i).Addr().Pointer() {
				t.Errorf("fallbackOwned: %q points at another field than SessionModel.%s", name, typ.Field(i).Name)
			}
		}
		if name == "compactionCount" {
			if owned[name] {
				t.Error("the compaction count is the session's, not a fallback's")
			}
			continue
		}
		if !owned[name] {
			t.Errorf("SessionModel.%s: decide whether a fallback owns it (policy.fallbackOwned)", typ.Field(i).Name)
		}
		delete(owned, name)
	}
	for name := range owned {
		t.Errorf("fallbackOwned names %q, which SessionModel has not", name)
	}
}

// SameFallbackOwned is the compare of the session's compare-and-set; SameFallbackWrite finds the
// reply's own write run again in a later workflow task, which differs only in its time.
func TestSameFallbackOwnedAndSameFallbackWrite(t *testing.T) {
	written := FallbackWrite(SessionModel{CompactionCount: 2}, claude, gpt5, "anthropic:a", sessT0)
	moved := func(f func(*SessionModel)) SessionModel {
		m := clone(written)
		f(&m)
		return m
	}
	for _, c := range []struct {
		name        string
		session     SessionModel
		owned, same bool // SameFallbackOwned, SameFallbackWrite
	}{
		{"a retried write finds what it wrote", clone(written), true, true},
		{"the same instant in another zone is the same write", moved(func(m *SessionModel) { m.ModelOverrideUpdatedAt = sessT0.In(time.FixedZone("x", 3600)) }), true, true},
		{"a compaction meanwhile is not a move: the count is the session's", moved(func(m *SessionModel) { m.CompactionCount = 3 }), true, true},
		{"a /model meanwhile is a move", UserChoice(written, gemini, "", sessT0.Add(time.Second)), false, false},
		{"a re-pin after compaction is a move", moved(func(m *SessionModel) { m.AuthProfileOverrideCompactionCount = counted(3) }), false, false},
		{"a pin dropped is a move", moved(func(m *SessionModel) { m.AuthProfileOverrideCompactionCount = nil }), false, false},
		{"another pin is a move", moved(func(m *SessionModel) { m.AuthProfileOverride = "anthropic:b" }), false, false},
		{"another fallback's origin is a move", moved(func(m *SessionModel) { m.ModelOverrideFallbackOriginModel = "gpt-4" }), false, false},
		{"another fallback target is a move", FallbackWrite(SessionModel{CompactionCount: 2}, gemini, gpt5, "anthropic:a", sessT0), false, false},
		{"the session before the write is not the write", SessionModel{CompactionCount: 2}, false, false},
		{"the same write run again later (its first task lost) is the same write at another time", moved(func(m *SessionModel) { m.ModelOverrideUpdatedAt = sessT0.Add(3 * time.Second) }), false, true},
	} {
		if got := SameFallbackOwned(c.session, written); got != c.owned {
			t.Errorf("%s: SameFallbackOwned = %v", c.name, got)
		}
		if got := SameFallbackWrite(c.session, written); got != c.same {
			t.Errorf("%s: SameFallbackWrite = %v", c.name, got)
		}
	}
}

func TestWithFallbackOwnedWritesOnlyWhatAFallbackOwns(t *testing.T) {
	session := SessionModel{CompactionCount: 5}
	next := FallbackWrite(SessionModel{CompactionCount: 2}, claude, gpt5, "anthropic:a", sessT0)
	got := WithFallbackOwned(session, next)
	want := next
	want.CompactionCount = 5
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	*next.AuthProfileOverrideCompactionCount = 9
	if *got.AuthProfileOverrideCompactionCount != 2 {
		t.Error("the written session shares a pointer with next")
	}
}

func TestNarrowRollback(t *testing.T) {
	before := SessionModel{CompactionCount: 2}
	written := FallbackWrite(before, claude, gpt5, "anthropic:a", sessT0)
	for _, c := range []struct {
		name    string
		current SessionModel
		want    SessionModel
	}{
		{"nobody touched the session: every field the fallback wrote goes back", written, before},
		{"a /model landed meanwhile: the user's model, source and time stay; the fallback's pin and origin go",
			UserChoice(written, gemini, "", sessT0.Add(time.Second)),
			SessionModel{ProviderOverride: "google", ModelOverride: "gemini", ModelOverrideSource: SourceUser, ModelOverrideUpdatedAt: sessT0.Add(time.Second), CompactionCount: 2}},
		{"a /model …@profile landed meanwhile: the user's model and pin stay (a field still equal to what the fallback wrote goes back)",
			UserChoice(written, gemini, "google:b", sessT0.Add(time.Second)),
			SessionModel{ProviderOverride: "google", ModelOverride: "gemini", ModelOverrideSource: SourceUser,
				AuthProfileOverride: "google:b", AuthProfileOverrideSource: SourceUser, ModelOverrideUpdatedAt: sessT0.Add(time.Second), CompactionCount: 2}},
		{"a compaction meanwhile stays", func() SessionModel { m := clone(written); m.CompactionCount = 3; return m }(),
			SessionModel{CompactionCount: 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := NarrowRollback(c.current, before, written); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestSessionStateEndTurn(t *testing.T) {
	onFallback := NoticeState{Selected: "openai/gpt-5", Active: "anthropic/claude"}
	loaded := SessionState{Model: onAuto, Notice: onFallback, FallbackReason: "rate_limit", LiveModelSwitchPending: true,
		LastReprobeAt: sessT0.Add(-time.Hour)}
	at := sessT0.Add(time.Minute)
	for _, c := range []struct {
		name  string
		state SessionState
		end   TurnEnd
		want  func(*SessionState)
	}{
		{"a sticky turn on the fallback names no new reason: the one that moved the session stands",
			loaded, TurnEnd{Notice: &onFallback, At: at},
			func(s *SessionState) {}},
		{"a turn that fell back again keeps its notice state and why",
			loaded, TurnEnd{Notice: &NoticeState{Selected: "openai/gpt-5", Active: "xai/grok"}, FallbackReason: "timeout", At: at},
			func(s *SessionState) { s.Notice.Active, s.FallbackReason = "xai/grok", "timeout" }},
		{"a turn back on the selected model clears the notice state and the reason",
			loaded, TurnEnd{Notice: &NoticeState{}, At: at},
			func(s *SessionState) { s.Notice, s.FallbackReason = NoticeState{}, "" }},
		{"cron and heartbeat turns keep no notice state", loaded, TurnEnd{FallbackReason: "timeout", At: at},
			func(s *SessionState) {}},
		{"a re-probe records when the origin was tried again", loaded, TurnEnd{Reprobed: true, At: at},
			func(s *SessionState) { s.LastReprobeAt = at }},
		{"the origin answered: the auto override, its origin and its pin go, and the profile that served is pinned",
			loaded, TurnEnd{ClearAuto: true, Reprobed: true, Pin: true, Provider: "openai", Profile: "openai:a", Notice: &NoticeState{}, At: at},
			func(s *SessionState) {
				s.Model = SessionModel{AuthProfileOverride: "openai:a", AuthProfileOverrideSource: SourceAuto, AuthProfileOverrideCompactionCount: counted(2), CompactionCount: 2}
				s.Notice, s.FallbackReason, s.LastReprobeAt = NoticeState{}, "", at
			}},
		{"the profile that served becomes the auto pin, at the session's compaction count",
			SessionState{Model: SessionModel{CompactionCount: 4}}, TurnEnd{Pin: true, Provider: "openai", Profile: "openai:b", At: at},
			func(s *SessionState) {
				s.Model.AuthProfileOverride, s.Model.AuthProfileOverrideSource, s.Model.AuthProfileOverrideCompactionCount = "openai:b", SourceAuto, counted(4)
			}},
		{"a user-pinned profile is never replaced by the one that served",
			SessionState{Model: onUser}, TurnEnd{Pin: true, Provider: "google", Profile: "google:home", At: at},
			func(s *SessionState) {}},
		{"no profile served: no pin", SessionState{Model: onUser}, TurnEnd{Pin: true, Provider: "anthropic", At: at},
			func(s *SessionState) {}},
		{"a turn end clears the pending live switch", SessionState{LiveModelSwitchPending: true}, TurnEnd{At: at},
			func(s *SessionState) {}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := cloneState(c.state)
			want.LiveModelSwitchPending = false
			c.want(&want)
			if got := c.state.EndTurn(c.end); !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestSessionStateReset(t *testing.T) {
	rest := func(m SessionModel) SessionState {
		return SessionState{Model: m, LiveModelSwitchPending: true, Notice: NoticeState{Selected: "openai/gpt-5", Active: "anthropic/claude"},
			SkipMarks: []SkipMark{{Model: "xai/grok", Profile: "xai:a", Reason: ReasonAuth, Until: sessT0}}, FallbackReason: "rate_limit", LastReprobeAt: sessT0}
	}
	for _, c := range []struct {
		name  string
		state SessionState
		want  SessionState
	}{
		{"/new clears an auto override, its origin, the pin, the compaction count, notice state, the skip cache and the rest",
			rest(onAuto), SessionState{}},
		{"/reset keeps the user's model override but drops the user's pin",
			rest(onUser), SessionState{Model: SessionModel{ProviderOverride: "google", ModelOverride: "gemini", ModelOverrideSource: SourceUser,
				ModelOverrideUpdatedAt: onUser.ModelOverrideUpdatedAt}}},
		{"a legacy override (no source) is the user's and stays", SessionState{Model: SessionModel{ModelOverride: "openai/gpt-4"}},
			SessionState{Model: SessionModel{ModelOverride: "openai/gpt-4"}}},
	} {
		if got := c.state.Reset(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got  %+v\nwant %+v", c.name, got, c.want)
		}
	}
}

func TestSessionStateMarkSkip(t *testing.T) {
	mark := func(model, profile string, until time.Time) SkipMark {
		return SkipMark{Model: model, Profile: profile, Reason: ReasonAuth, Until: until}
	}
	now := sessT0
	fresh := mark("xai/grok", "xai:a", now.Add(time.Minute))
	for _, c := range []struct {
		name  string
		marks []SkipMark
		want  []SkipMark
	}{
		{"the first mark", nil, []SkipMark{fresh}},
		{"a mark for the same candidate and profile is replaced", []SkipMark{mark("xai/grok", "xai:a", now.Add(time.Second))}, []SkipMark{fresh}},
		{"marks for another profile or candidate stay",
			[]SkipMark{mark("xai/grok", "xai:b", now.Add(time.Second)), mark("xai/grok-mini", "xai:a", now.Add(time.Second))},
			[]SkipMark{fresh, mark("xai/grok", "xai:b", now.Add(time.Second)), mark("xai/grok-mini", "xai:a", now.Add(time.Second))}},
		{"a mark past its TTL goes (now >= until is expired)", []SkipMark{mark("xai/grok", "xai:b", now)}, []SkipMark{fresh}},
	} {
		s := SessionState{SkipMarks: c.marks, FallbackReason: "auth"}
		got := s.MarkSkip(fresh, now)
		if !reflect.DeepEqual(got, SessionState{SkipMarks: c.want, FallbackReason: "auth"}) {
			t.Errorf("%s: got %+v", c.name, got.SkipMarks)
		}
	}
}

func TestSessionStateChooseModelAndCompact(t *testing.T) {
	s := SessionState{Model: onAuto, Notice: NoticeState{Selected: "openai/gpt-5", Active: "anthropic/claude"}, FallbackReason: "rate_limit"}
	got := s.ChooseModel(gemini, "google:a", sessT0)
	want := s
	want.Model, want.LiveModelSwitchPending = UserChoice(onAuto, gemini, "google:a", sessT0), true
	if !reflect.DeepEqual(got, want) {
		t.Errorf("/model: only a user's change marks a live switch pending\n got  %+v\nwant %+v", got, want)
	}
	pinned := SessionState{Model: SessionModel{AuthProfileOverride: "openai:a", AuthProfileOverrideSource: SourceAuto, AuthProfileOverrideCompactionCount: counted(0)}}
	compacted := pinned.Compact()
	if compacted.Model.CompactionCount != 1 || compacted.LiveModelSwitchPending {
		t.Errorf("compaction: %+v", compacted)
	}
	if _, _, ok := compacted.Model.ProfilePin("openai"); ok {
		t.Error("an auto pin from before a compaction still holds")
	}
}

func TestAuthAgent(t *testing.T) {
	for _, c := range []struct {
		name        string
		agent       string
		ownProfiles int
		want        string
	}{
		{"an agent with profiles of its own uses them", "ops", 2, "ops"},
		{"an agent without profiles inherits the main agent's", "ops", 0, "main"},
		{"the main agent uses its own, even none", "main", 0, "main"},
		{"the main agent with profiles", "main", 1, "main"},
	} {
		if got := AuthAgent(c.agent, c.ownProfiles); got != c.want {
			t.Errorf("%s: AuthAgent(%q, %d) = %q, want %q", c.name, c.agent, c.ownProfiles, got, c.want)
		}
	}
}

func clone(m SessionModel) SessionModel {
	m.AuthProfileOverrideCompactionCount = copyInt(m.AuthProfileOverrideCompactionCount)
	return m
}

func cloneState(s SessionState) SessionState {
	s.Model = clone(s.Model)
	s.SkipMarks = append([]SkipMark(nil), s.SkipMarks...)
	if len(s.SkipMarks) == 0 {
		s.SkipMarks = nil
	}
	return s
}
