package policy

import (
	"regexp"
	"strings"
)

// matcher is a pattern list: plain substrings, checked with strings.Contains, and regular
// expressions, each run only when the message contains one of its gate words. Most messages
// then cost a few substring scans instead of dozens of regexp runs.
type matcher struct {
	lits  []string
	gated []gatedRe
	exact []string // whole-message matches (trimmed, lower-cased)
}

type gatedRe struct {
	gates []string
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
	if len(g.gates) == 0 {
		return true
	}
	for _, gate := range g.gates {
		if strings.Contains(lower, gate) {
			return true
		}
	}
	return false
}

// lits builds a matcher of substrings.
func lits(l ...string) matcher { return matcher{lits: l} }

// with adds a regular expression run only when one of gates is present ("" gates: always).
func (m matcher) with(gates string, expr string) matcher {
	var gs []string
	if gates != "" {
		gs = strings.Split(gates, "|")
	}
	m.gated = append(m.gated, gatedRe{gates: gs, re: regexp.MustCompile(expr)})
	return m
}

// exactly adds whole-message matches.
func (m matcher) exactly(e ...string) matcher {
	m.exact = append(m.exact, e...)
	return m
}
