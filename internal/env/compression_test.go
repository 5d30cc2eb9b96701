package env

import (
	"strings"
	"testing"

	"go.temporal.io/sdk/client"
)

func TestCompressionIsOffOnlyWhereItSavesNothing(t *testing.T) {
	for _, c := range []struct {
		setting, address string
		gzip             bool
	}{
		{"", "127.0.0.1:7233", false},
		{"auto", "localhost:7233", false},
		{"AUTO", "10.0.3.4:7233,192.168.1.9:7233", false},
		{"", "[::1]:7233", false},
		{"", "[fd00::5]:7233", false},
		{"", "my-ns.a1b2c.tmprl.cloud:7233", true},
		{"", "temporal:7233", true}, // a name is not resolved to decide
		{"", "10.0.3.4:7233,203.0.113.7:7233", true},
		{"gzip", "127.0.0.1:7233", true},
		{"none", "my-ns.a1b2c.tmprl.cloud:7233", false},
		{" none ", "temporal:7233", false},
	} {
		got, err := Compression(c.setting, c.address)
		if err != nil {
			t.Fatalf("%q %q: %v", c.setting, c.address, err)
		}
		_, isGzip := got.(*client.GrpcCompressionGzip)
		_, isNone := got.(*client.GrpcCompressionNone)
		if isGzip != c.gzip || isNone == c.gzip {
			t.Errorf("%q for %s: %T", c.setting, c.address, got)
		}
	}
	if _, err := Compression("zstd", "127.0.0.1:7233"); err == nil || !strings.Contains(err.Error(), EnvCompression) || !strings.Contains(err.Error(), `"zstd"`) {
		t.Errorf("an unknown setting: %v", err)
	}
}
