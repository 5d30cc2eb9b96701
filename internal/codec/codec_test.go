package codec

import (
	"bytes"
	"strings"
	"testing"

	"go.temporal.io/sdk/converter"
)

const hexKey = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

func TestRoundTripAndOpacity(t *testing.T) {
	dc, err := DataConverter(hexKey)
	if err != nil {
		t.Fatal(err)
	}
	p, err := dc.ToPayload(map[string]string{"message": "a secret prompt"})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(p.GetData(), []byte("secret prompt")) || string(p.GetMetadata()[converter.MetadataEncoding]) != EncodingEncrypted {
		t.Fatalf("payload readable: %q", p.GetData())
	}
	var back map[string]string
	if err := dc.FromPayload(p, &back); err != nil || back["message"] != "a secret prompt" {
		t.Fatalf("%v %v", back, err)
	}
	other, _ := DataConverter(strings.Repeat("ab", 32))
	if err := other.FromPayload(p, &back); err == nil || !strings.Contains(err.Error(), "encrypted with key") {
		t.Errorf("another key: %v", err)
	}
	if dc, err := DataConverter(""); dc != nil || err != nil {
		t.Error("no key must mean no codec")
	}
	for _, bad := range []string{"short", strings.Repeat("zz", 32)} {
		if _, err := DataConverter(bad); err == nil {
			t.Errorf("key %q accepted", bad)
		}
	}
}
