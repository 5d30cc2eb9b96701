// Command baton is baton's command line and its front door. It starts replies (`reply`, and
// `serve`, an OpenAI- and Anthropic-compatible endpoint that streams each reply live through a
// worker of its own), manages what they depend on (sessions, auth profiles, cron schedules, the
// config check), reads replies back (`history`, `explain`, `replay`, the operator page), and
// carries the lab for trying baton without providers (`simulate`, `fake-provider`, `bench`).
// Every command reads TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and BATON_TASK_QUEUE like the worker,
// and takes --address, --namespace and --task-queue to override them.
package main
