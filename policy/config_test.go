package policy

import (
	"testing"
	"time"
)

// ParseConfig is config.ParseConfig, for policy's tests that write their configs in JSON5 (chain,
// order, content, bench). policy cannot import config, which imports policy; the external test
// file config_ext_test.go hands it over before any test runs.
var ParseConfig func(src []byte) (*Config, error)

func TestDefaultCooldownsAreTheSeeds(t *testing.T) {
	if d := DefaultCooldowns(); d.BillingBackoff != 5*time.Hour || d.BillingMax != 24*time.Hour ||
		d.AuthPermanentBackoff != 10*time.Minute || d.AuthPermanentMax != time.Hour || d.OverloadedBackoff != 0 {
		t.Errorf("defaults differ from the seeds: %+v", d)
	}
	if DefaultCooldowns().AllowFormatRetry {
		t.Error("format errors are terminal unless the config opts in")
	}
}

func TestParseModelRef(t *testing.T) {
	cases := []struct {
		in      string
		want    ModelRef
		wantErr bool
	}{
		{"openai/gpt-5", ModelRef{"openai", "gpt-5"}, false},
		{"OpenRouter/meta-llama/llama-3.3-70b", ModelRef{"openrouter", "meta-llama/llama-3.3-70b"}, false},
		{"gpt-5", ModelRef{}, true},
		{"/gpt-5", ModelRef{}, true},
		{"openai/", ModelRef{}, true},
		{"", ModelRef{}, true},
		{"open ai/gpt", ModelRef{}, true},
	}
	for _, c := range cases {
		got, err := ParseModelRef(c.in)
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("ParseModelRef(%q) = %+v, %v", c.in, got, err)
		}
	}
}
