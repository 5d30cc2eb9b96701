package policy

import (
	"regexp"
	"strings"
)

// matcher is a pattern list: plain substrings, checked with strings.Contains, and regular
// expressions, each run only when the message contains one of its gate words (of each group, when
// the gate has several). Most messages then cost a few substring scans instead of dozens of
// regexp runs.
type matcher struct {
	lits  []string
	gated []gatedRe
	exact []string // whole-message matches (trimmed, lower-cased)
}

type gatedRe struct {
	gates [][]string // every group must have one word present
	re    *regexp.Regexp
}

func (m *matcher) match(lower string) bool {
	for _, l := range m.lits {
		if strings.Contains(lower, l) {
			return true
		}
	}
	for _, e := range m.exact {
		if lower == e {
			return true
		}
	}
	for _, g := range m.gated {
		if g.open(lower) && g.re.MatchString(lower) {
			return true
		}
	}
	return false
}

func (g gatedRe) open(lower string) bool {
	for _, group := range g.gates {
		if !containsAny(lower, group) {
			return false
		}
	}
	return true
}

func containsAny(lower string, words []string) bool {
	for _, w := range words {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// lits builds a matcher of substrings.
func lits(l ...string) matcher { return matcher{lits: l} }

// with adds a regular expression run only when one of gates is present ("" gates: always);
// "a|b&c|d" needs one of a, b and one of c, d (a common word alone would open it too often).
func (m matcher) with(gates string, expr string) matcher {
	var gs [][]string
	if gates != "" {
		for _, group := range strings.Split(gates, "&") {
			gs = append(gs, strings.Split(group, "|"))
		}
	}
	m.gated = append(m.gated, gatedRe{gates: gs, re: regexp.MustCompile(expr)})
	return m
}

// exactly adds whole-message matches.
func (m matcher) exactly(e ...string) matcher {
	m.exact = append(m.exact, e...)
	return m
}
