package store

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/batonhq/baton/policy"
)

// The spend ledger: one row per provider call that consumed tokens, under the call's identity
// (an attempt run again after a lost worker records nothing twice). Budgets sum it by agent or
// cron job and UTC day; the replies list and the operator page sum it by reply.

// SpendRow is one call's spend.
type SpendRow struct {
	Key      string // the attempt's identity: <workflow id>/<run id>/<n>
	Reply    string // the reply's run: <workflow id>/<run id> (a session's replies share a workflow id)
	Agent    string // the reply's agent (whose budget it counts against)
	Job      string // the cron job that started the reply, "" for none
	Provider string
	Model    string
	At       time.Time
	Spend    policy.Spend
}

// RecordSpend adds a call's spend to the ledger, once per key.
func (s *Store) RecordSpend(ctx context.Context, r SpendRow) error {
	priced := 0
	if r.Spend.Priced {
		priced = 1
	}
	err := s.write(ctx, func(t *tx) error {
		_, err := t.exec(ctx, `INSERT INTO spend (key, reply, agent, job, day, provider, model, input, output, cached, cache_write,
			cost_nanos, priced, at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING`,
			r.Key, r.Reply, r.Agent, r.Job, policy.DayOf(r.At).Format(time.DateOnly), r.Provider, r.Model,
			r.Spend.Input, r.Spend.Output, r.Spend.CachedInput, r.Spend.CacheWrite, nanos(r.Spend.Cost), priced, ms(r.At))
		return err
	})
	if err != nil {
		return fmt.Errorf("recording the spend of attempt %s: %w", r.Key, err)
	}
	return nil
}

// SpentOn is what the calls of an agent's replies (job "") or of a cron job's runs (job set)
// spent on the UTC day of at.
func (s *Store) SpentOn(ctx context.Context, agent, job string, at time.Time) (policy.Spend, error) {
	col, val := "agent", agent
	if job != "" {
		col, val = "job", job
	}
	rows, err := s.sumSpend(ctx, false, `WHERE `+col+` = ? AND day = ?`, val, policy.DayOf(at).Format(time.DateOnly))
	if err != nil {
		return policy.Spend{}, fmt.Errorf("reading what %s %s spent: %w", col, val, err)
	}
	return rows[""], nil
}

// SpendOfReplies is what each of these replies (SpendRow.Reply: <workflow id>/<run id>) spent; a
// reply that spent nothing recorded is absent.
func (s *Store) SpendOfReplies(ctx context.Context, replies []string) (map[string]policy.Spend, error) {
	if len(replies) == 0 {
		return map[string]policy.Spend{}, nil
	}
	args := make([]any, len(replies))
	for i, r := range replies {
		args[i] = r
	}
	out, err := s.sumSpend(ctx, true, `WHERE reply IN (?`+strings.Repeat(", ?", len(replies)-1)+`) GROUP BY reply`, args...)
	if err != nil {
		return nil, fmt.Errorf("reading the replies' spend: %w", err)
	}
	return out, nil
}

// sumSpend sums the ledger's rows that where selects: by reply (where groups by it), else all
// under "".
func (s *Store) sumSpend(ctx context.Context, byReply bool, where string, args ...any) (map[string]policy.Spend, error) {
	key := `''`
	if byReply {
		key = `reply`
	}
	rows, err := s.query(ctx, `SELECT `+key+`, COALESCE(SUM(input), 0), COALESCE(SUM(output), 0), COALESCE(SUM(cached), 0),
		COALESCE(SUM(cache_write), 0), COALESCE(SUM(cost_nanos), 0), COALESCE(MAX(priced), 0) FROM spend `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]policy.Spend{}
	for rows.Next() {
		var k string
		var sp policy.Spend
		var cost int64
		var priced int
		if err := rows.Scan(&k, &sp.Input, &sp.Output, &sp.CachedInput, &sp.CacheWrite, &cost, &priced); err != nil {
			return nil, err
		}
		sp.Cost, sp.Priced = float64(cost)/1e9, priced == 1
		out[k] = sp
	}
	return out, rows.Err()
}

// nanos is a dollar amount in billionths.
func nanos(usd float64) int64 { return int64(math.Round(usd * 1e9)) }
