package workflows

import (
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// ReplyStartOptions are how every starter of a reply (baton reply, serve, cron schedules, the
// bench) starts it: the agent and session go in as search attributes at start, so the reply need
// not spend a history event upserting them.
func ReplyStartOptions(id, taskQueue, agent, session string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{ID: id, TaskQueue: taskQueue, TypedSearchAttributes: ReplySearchAttributes(agent, session)}
}

// ReplySearchAttributes are the attributes a reply starts with.
func ReplySearchAttributes(agent, session string) temporal.SearchAttributes {
	sa := []temporal.SearchAttributeUpdate{saAgent.ValueSet(agent)}
	if session != "" {
		sa = append(sa, saSession.ValueSet(session))
	}
	return temporal.NewSearchAttributes(sa...)
}
