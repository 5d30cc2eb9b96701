package node

import (
	"strings"
	"testing"

	"github.com/batonhq/baton/store"
)

func TestKeysReadTheStoresConnectionBound(t *testing.T) {
	env := func(v string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			if k == store.MaxConnsEnv {
				return v, true
			}
			return "", false
		}
	}
	if o, err := Keys(env("24")); err != nil || o.MaxConns != 24 {
		t.Errorf("24: %+v %v", o, err)
	}
	if o, err := Keys(env("")); err != nil || o.MaxConns != 0 {
		t.Errorf("unset: %+v %v", o, err)
	}
	for _, bad := range []string{"0", "many", "-3"} {
		if _, err := Keys(env(bad)); err == nil || !strings.Contains(err.Error(), store.MaxConnsEnv) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
