package serve

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonhq/baton/lab/fakeprovider"
)

// Issue 26, "one probe per outage": stateless requests through serve whose primary and fallback
// share one key obey the cooldown the first one wrote. During a 60 s run of 503 on the primary,
// 15 requests 4 s apart make at most 5 primary calls (the first request's call and its two
// retries in place, then one probe per 30 s throttle window, each probe one call); a request
// that carries no probe is answered by the fallback at once; the primary serves again within
// 30 s of its recovery. The six cases run side by side (each in a world of its own), so the test
// takes one outage's time.
func TestStatelessRequestsThroughServeProbeADeadPrimaryOncePerWindow(t *testing.T) {
	bodies := map[string]string{
		"empty":      "",
		"html":       "<html><head><title>503 Service Temporarily Unavailable</title></head><body><h1>503 Service Temporarily Unavailable</h1></body></html>",
		"overloaded": `{"error":{"message":"The server is overloaded, please try again later.","type":"server_error","code":"overloaded"}}`,
	}
	type run struct {
		name     string
		problems []string
	}
	var runs []*run
	var wg sync.WaitGroup
	for _, kind := range []string{"empty", "html", "overloaded"} {
		for _, stream := range []bool{false, true} {
			fallback := fakeprovider.Rule{Match: fakeprovider.Match{Provider: "openai", Model: "gpt-5-mini"},
				Respond: []fakeprovider.Response{{Text: "from the fallback"}}}
			tw := newLiveWorld(t, `{agents: {defaults: {model: {primary: "openai/gpt-5", fallbacks: ["openai/gpt-5-mini"]}}}}`,
				[]fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "openai", Model: "gpt-5"},
					Respond: []fakeprovider.Response{{Status: 503, Body: bodies[kind]}}}, fallback})
			r := &run{name: fmt.Sprintf("503 %s, stream %v", kind, stream)}
			runs = append(runs, r)
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.problems = probeRun(tw, stream, func() {
					tw.Fake.SetRules([]fakeprovider.Rule{{Match: fakeprovider.Match{Provider: "openai", Model: "gpt-5"},
						Respond: []fakeprovider.Response{{Text: "from the primary"}}}, fallback})
				})
			}()
		}
	}
	wg.Wait()
	for _, r := range runs {
		t.Logf("%s: %s", r.name, r.problems[0])
		for _, p := range r.problems[1:] {
			t.Errorf("%s: %s", r.name, p)
		}
	}
}

// probeRun sends a request every 4 s: 15 during a 60 s outage, then more until the primary
// answers again (recover ends the outage). It returns its figures, then what breaks issue 26's
// promise.
func probeRun(tw *turnWorld, stream bool, recover func()) []string {
	const (
		every     = 4 * time.Second
		during    = 15 // requests during the outage
		maxCalls  = 5  // primary calls allowed during it
		slack     = 500 * time.Millisecond
		backAfter = 30 * time.Second
	)
	body := fmt.Sprintf(`{"model":"openai/gpt-5","fallbacks":["openai/gpt-5-mini"],"stream":%v,"messages":[{"role":"user","content":"hi"}]}`, stream)
	type sent struct{ start, end time.Time }
	var reqs []sent
	var recovered time.Time
	// served is what the provider saw during a request: its primary calls and the call that answered.
	served := func(r sent) (primary int, answer *fakeprovider.Call) {
		for _, c := range tw.Fake.Calls() {
			if c.At.Before(r.start) || c.At.After(r.end) {
				continue
			}
			if c.Model == "gpt-5" {
				primary++
			}
			if c.Outcome == "text" {
				answer = &c
			}
		}
		return primary, answer
	}
	begin := time.Now()
	for i := 0; ; i++ {
		time.Sleep(time.Until(begin.Add(time.Duration(i) * every)))
		if i == during {
			recover()
			recovered = time.Now()
		}
		r := sent{start: time.Now()}
		resp, err := http.Post(tw.h.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			return []string{"", fmt.Sprintf("request %d: %v", i, err)}
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		r.end = time.Now()
		reqs = append(reqs, r)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(out), "from ") { // a stream sends it word by word
			return []string{"", fmt.Sprintf("request %d: %d %s", i, resp.StatusCode, out)}
		}
		if _, a := served(r); i >= during && a != nil && a.Model == "gpt-5" {
			break
		}
		if i >= during && r.end.Sub(recovered) > backAfter {
			return []string{"", fmt.Sprintf("the primary was not back within %v of its recovery", backAfter)}
		}
	}

	var figures, problems []string
	primaryCalls := 0
	for _, c := range tw.Fake.Calls() {
		if c.Model == "gpt-5" && c.At.Before(recovered) {
			primaryCalls++
		}
	}
	if primaryCalls > maxCalls {
		problems = append(problems, fmt.Sprintf("%d primary calls during the outage, want at most %d (the first request's retries, then one probe per 30 s)", primaryCalls, maxCalls))
	}
	for i, r := range reqs {
		primary, answer := served(r)
		if answer == nil {
			problems = append(problems, fmt.Sprintf("request %d: no answer among the provider's calls", i))
			continue
		}
		took := r.end.Sub(r.start)
		figures = append(figures, fmt.Sprintf("%d: %.2fs primary=%d served=%s", i, took.Seconds(), primary, answer.Model))
		if i >= during {
			continue
		}
		if answer.Model != "gpt-5-mini" {
			problems = append(problems, fmt.Sprintf("request %d was answered by %s during the outage", i, answer.Model))
		}
		if i > 0 && primary > 1 {
			problems = append(problems, fmt.Sprintf("request %d called the primary %d times: a probe is one call", i, primary))
		}
		if own := answer.EndedAt.Sub(answer.At); i > 0 && primary == 0 && took-own > slack {
			// No probe: the fallback at once, within slack of the provider's own time.
			problems = append(problems, fmt.Sprintf("request %d took %v, its fallback's provider %v: not answered by the fallback at once", i, took, own))
		}
	}
	last := reqs[len(reqs)-1]
	summary := fmt.Sprintf("primary calls during the outage: %d; back %.1fs after recovery\n%s", primaryCalls,
		last.end.Sub(recovered).Seconds(), strings.Join(figures, "\n"))
	return append([]string{summary}, problems...)
}
