package main

import (
	"fmt"
	"io"
)

// isHelp is an argument asking for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help" || arg == "help"
}

// examples are printed under a command's flags by --help, keyed by its flag set's name.
var examples = map[string][]string{
	"reply":               {`baton reply --session alice "What changed in the last release?"`, `baton reply --model openai/gpt-5 --wait 10m "summarise this" --json`, `baton reply cancel reply/main/alice`, `baton reply attach resp_3f2a…`},
	"ping":                {`baton ping --timeout 10s`},
	"serve":               {`BATON_SERVE_TOKEN=$(openssl rand -hex 16) baton serve --listen 0.0.0.0:8080 --config openclaw.json5`},
	"codec-server":        {`BATON_CODEC_TOKEN=$(openssl rand -hex 16) baton codec-server --origin http://127.0.0.1:8233   # then the UI's codec endpoint: http://127.0.0.1:8081/$BATON_CODEC_TOKEN`},
	"simulate":            {`baton simulate testsuite/scenarios/own/rate-limit-rotation.json --check`},
	"classify":            {`echo '{"status":429,"message":"Rate limit reached"}' | baton classify`},
	"fake-provider":       {`baton fake-provider --listen 127.0.0.1:9233 --script scripts/demo-provider.json`},
	"doctor":              {`baton doctor --state-dir ~/.openclaw`, `baton doctor --state-dir ~/.openclaw --fix`},
	"bench":               {`baton bench --json > bench/results.json`},
	"chaos":               {`baton chaos --postgres "$(scripts/test-postgres.sh)" --postgres-restart "scripts/test-postgres.sh restart" --duration 5m --rate 20 --json chaos.json`},
	"history export":      {`baton history export reply/main/alice > reply.json`, `baton history export --decode reply/main/alice > reply-plain.json`},
	"replay":              {`baton replay reply.json`, `baton replay --workflow-id reply/main/alice`},
	"explain":             {`baton explain reply/main/alice`, `baton explain reply.json --svg incident.svg`},
	"auth list":           {`baton auth list`, `baton auth list --agent ops --json`},
	"auth add":            {`printf '%s\n' "$OPENAI_API_KEY" | baton auth add --provider openai --id openai:work`},
	"auth order set":      {`baton auth order set openai openai:work openai:personal`},
	"auth clear-cooldown": {`baton auth clear-cooldown openai:work`},
	"auth test":           {`baton auth test openai:work --model openai/gpt-5`},
	"auth disable":        {`baton auth disable openai:work --note "key leaked, rotating"`},
	"auth enable":         {`baton auth enable openai:work`},
	"auth remove":         {`baton auth remove openai:old`},
	"auth rekey":          {`BATON_SECRET_KEY=$OLD BATON_SECRET_KEY_NEW=$(openssl rand -hex 32) baton auth rekey`},
	"cron add":            {`baton cron add digest --cron "0 9 * * *" --tz Europe/Berlin --model openai/gpt-5 --wait 30m "Summarise yesterday's tickets"`},
	"cron list":           {`baton cron list`},
	"cron describe":       {`baton cron describe digest`},
	"cron pause":          {`baton cron pause digest --note "holiday"`},
	"cron resume":         {`baton cron resume digest`},
	"cron trigger":        {`baton cron trigger digest`},
	"cron backfill":       {`baton cron backfill digest --from 2026-01-01T00:00:00Z --to 2026-01-02T00:00:00Z`},
	"cron delete":         {`baton cron delete digest`},
	"session status":      {`baton session status alice`},
	"session model":       {`baton session model alice anthropic/claude-sonnet-4-5@anthropic:work`},
	"session reset":       {`baton session reset alice`},
	"session compact":     {`baton session compact alice`},
	"session patch":       {`baton session patch alice model=openai/gpt-5`},
	"session list":        {`baton session list --fallback`, `baton session list --agent ops --json`},
	"replies":             {`baton replies --failed-over --since 24h`, `baton replies --agent ops --limit 50 --json`},
	"health":              {`baton health http://127.0.0.1:9090/readyz`},
	"version":             {`baton version`},
	"config check":        {`baton config check examples/baton.json5`, `baton config check /etc/baton/baton.json5 --store postgres://…`},
}

// printExamples writes a command's examples, if it has any.
func printExamples(w io.Writer, name string) {
	ex := examples[name]
	if len(ex) == 0 {
		return
	}
	fmt.Fprintln(w, "\nExamples:")
	for _, e := range ex {
		fmt.Fprintln(w, "  "+e)
	}
}

const authHelp = `Usage: baton auth SUBCOMMAND [flags]   (baton auth SUBCOMMAND --help for its flags)

Auth profiles in the store (BATON_STORE, or --store):
  list             the agent's profiles: type, email, expiry and state (never a secret)
  add              store a credential (the key from --key or one line of stdin)
  order set        the agent's stored order for a provider (no profiles clears it)
  clear-cooldown   clear a profile's cooldowns and disables
  test             one attempt with a profile and model, outside any workflow
  disable          keep a profile out of every chain until enabled (no failure or success lifts it)
  enable           lift a manual disable
  remove           delete a stored profile with its secret and state
  rekey            re-seal every stored secret under BATON_SECRET_KEY_NEW, in one transaction

Examples:
  baton auth list
  baton auth disable openai:work --note "key leaked"
  BATON_SECRET_KEY=$OLD BATON_SECRET_KEY_NEW=$(openssl rand -hex 32) baton auth rekey
`

const cronHelp = `Usage: baton cron SUBCOMMAND [flags]   (baton cron SUBCOMMAND --help for its flags)

Cron jobs on Temporal Schedules, each starting the Reply workflow:
  add ID --cron EXPR "message"   a job (--model, --fallbacks, --no-fallbacks, --wait, --tz, --overlap)
  list                           the jobs, their expression and next run
  describe ID                    a job and its recent runs with their answer or failure
  pause ID, resume ID            stop and start a job (--note says why)
  trigger ID                     run a job now
  backfill ID --from T --to T    run the times a job missed
  delete ID                      remove a job

Examples:
  baton cron add digest --cron "0 9 * * *" --tz Europe/Berlin "Summarise yesterday's tickets"
  baton cron describe digest
`

const sessionHelp = `Usage: baton session SUBCOMMAND [flags]   (baton session SUBCOMMAND --help for its flags)

Sessions in the store (BATON_STORE, or --store):
  list                         recent sessions, their agent and active override (--fallback: only those on a fallback)
  status SESSION               the selected model and, on a fallback, which and why (/status)
  model SESSION p/m[@profile]  a user's /model: strict, sent to the session's running replies
  reset SESSION                /new: automatic overrides, pin and skip marks go
  compact SESSION              a compaction (the automatic pin goes stale)
  patch SESSION field=value... sessions.patch (model, providerOverride, modelOverride, authProfileOverride)

Examples:
  baton session list --fallback
  baton session status alice
`

const historyHelp = `Usage: baton history export WORKFLOW_ID [--run-id R] [--decode] > FILE.json

Writes a workflow history as ` + "`temporal workflow show --output json`" + ` does, payloads kept encoded
(--decode decrypts them with BATON_PAYLOAD_KEY). baton history export --help lists the flags.

Examples:
  baton history export reply/main/alice > reply.json
  baton replay reply.json
`

// dispatcherHelp answers `baton NAME --help` for commands whose first argument is a subcommand
// and that do not answer it themselves.
var dispatcherHelp = map[string]string{"config": configHelp}

const configHelp = `Usage: baton config check FILE [--store URL]   (baton config check --help for its flags)

Checks an OpenClaw-shaped config as the worker would load it and prints every problem with its
line; exit 0 when there is none.

Examples:
  baton config check examples/baton.json5
`
