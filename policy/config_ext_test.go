package policy_test

import (
	"github.com/batonhq/baton/config"
	"github.com/batonhq/baton/policy"
)

// policy's own tests read their JSON5 configs with the one decoder there is, package config's
// (see ParseConfig in config_test.go).
func init() { policy.ParseConfig = config.ParseConfig }
