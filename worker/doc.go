// Command baton-worker is the shared worker: it runs every reply's workflow code and every
// activity (the store steps, and the attempts no front door runs itself). It reads its settings
// from the environment (see README.md), opens the store and the config (reloaded on change),
// connects to Temporal, registers through registry/, serves /metrics and the health checks, and
// polls BATON_TASK_QUEUE until SIGINT or SIGTERM, then drains: running activities get
// WorkerStopTimeout to finish.
package main
