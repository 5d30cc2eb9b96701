package workflows_test

import "go.temporal.io/sdk/workflow"

func workflowName(name string) workflow.RegisterOptions { return workflow.RegisterOptions{Name: name} }
