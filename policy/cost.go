package policy

import (
	"fmt"
	"math"
	"time"
)

// What a failover costs: the tokens each call consumed, priced where the catalog gives a price,
// and the daily budgets a cron job or an agent may set.

// ModelCost is a model's price in US dollars per million tokens (models.providers.<id>.models[].cost,
// OpenClaw's catalog shape). Input is the price of uncached input, CacheRead of input read from
// the prompt cache, CacheWrite of input written to it; zero prices what the provider does not
// charge.
type ModelCost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead,omitempty"`
	CacheWrite float64 `json:"cacheWrite,omitempty"`
}

// Spend is what calls consumed: tokens in OpenAI's meaning (Input counts cached input and input
// written to the cache too), and their cost in US dollars when the model is priced (Priced).
type Spend struct {
	Input       int64   `json:"inputTokens,omitempty"`
	Output      int64   `json:"outputTokens,omitempty"`
	CachedInput int64   `json:"cachedInputTokens,omitempty"`
	CacheWrite  int64   `json:"cacheWriteTokens,omitempty"`
	Cost        float64 `json:"cost,omitempty"`
	Priced      bool    `json:"priced,omitempty"`
}

// IsZero reports a spend of nothing.
func (s Spend) IsZero() bool { return s == Spend{} }

// Add is the sum of two spends; it is priced when either is.
func (s Spend) Add(o Spend) Spend {
	return Spend{Input: s.Input + o.Input, Output: s.Output + o.Output, CachedInput: s.CachedInput + o.CachedInput,
		CacheWrite: s.CacheWrite + o.CacheWrite, Cost: s.Cost + o.Cost, Priced: s.Priced || o.Priced}
}

// Price is the spend of these tokens at cost (nil: unpriced, tokens only). Cached and written
// input are priced at their own rates, and at the input rate when the catalog gives none.
func Price(tokens Spend, cost *ModelCost) Spend {
	tokens.Cost, tokens.Priced = 0, false
	if cost == nil {
		return tokens
	}
	uncached := max(tokens.Input-tokens.CachedInput-tokens.CacheWrite, 0)
	read, write := cost.CacheRead, cost.CacheWrite
	if read == 0 {
		read = cost.Input
	}
	if write == 0 {
		write = cost.Input
	}
	usd := (float64(uncached)*cost.Input + float64(tokens.CachedInput)*read + float64(tokens.CacheWrite)*write +
		float64(tokens.Output)*cost.Output) / 1e6
	tokens.Cost, tokens.Priced = math.Round(usd*1e9)/1e9, true // to a billionth of a dollar: sums stay exact enough
	return tokens
}

// Cost returns the catalog's price of a model, nil when it has none.
func (c *Config) Cost(ref ModelRef) *ModelCost {
	spec, _ := c.modelSpec(ref)
	return spec.Cost
}

// Deployment is the Azure deployment that serves a model: its catalog entry's, else "" (the
// model's id serves).
func (c *Config) Deployment(ref ModelRef) string {
	spec, _ := c.modelSpec(ref)
	return spec.Deployment
}

// TotalSpend is what a reply's attempts spent together.
func TotalSpend(attempts []Attempt) Spend {
	var total Spend
	for _, a := range attempts {
		if a.Spend != nil {
			total = total.Add(*a.Spend)
		}
	}
	return total
}

// Budget is a daily spending limit in US dollars (cron.jobs[].budget, agents.list[].budget):
// what the attempts of its replies cost over a UTC day.
type Budget struct {
	PerDay float64 `json:"perDay"`
}

// BudgetCheck is a budget and what was spent against it on the day a reply starts: read by the
// reply's first step, judged by OverBudget.
type BudgetCheck struct {
	// Scope names whose budget it is: "cron job <id>" or "agent <id>".
	Scope  string    `json:"scope"`
	PerDay float64   `json:"perDay"`
	Spent  float64   `json:"spent"`
	Day    time.Time `json:"day"` // the UTC day's start
}

// ErrBudgetExceeded ends a reply that would start over its daily budget.
const ErrBudgetExceeded = "BudgetExceededError"

// OverBudget returns the first budget already spent (a run that would start over it does not
// start), nil when every one has room. A run is judged at its start: a run that starts with room
// finishes, whatever it costs.
func OverBudget(checks []BudgetCheck) *BudgetCheck {
	for i := range checks {
		if checks[i].PerDay >= 0 && checks[i].Spent >= checks[i].PerDay {
			return &checks[i]
		}
	}
	return nil
}

// BudgetNotice is the notice (and the error message) of a run that did not start.
func BudgetNotice(b BudgetCheck) string {
	return fmt.Sprintf("⛔ Budget: %s has spent $%.4f of its $%.2f for %s (UTC); this run did not start.",
		b.Scope, b.Spent, b.PerDay, b.Day.Format(time.DateOnly))
}

// DayOf is the UTC day a moment falls in, as budgets count it.
func DayOf(t time.Time) time.Time {
	return t.UTC().Truncate(24 * time.Hour)
}
