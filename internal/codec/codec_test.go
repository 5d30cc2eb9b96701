package codec

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"
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

const oldHexKey = "1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100"

// BATON_PAYLOAD_KEYS: after a rotation, payloads written under the old key still decode; new ones
// are written under the new key only.
func TestKeyRotation(t *testing.T) {
	before, err := Parse(oldHexKey, "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := before.Converters().Data.ToPayload("written before the rotation")
	if err != nil {
		t.Fatal(err)
	}
	after, err := Parse(hexKey, oldHexKey)
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := after.Converters().Data.FromPayload(p, &s); err != nil || s != "written before the rotation" {
		t.Fatalf("old payload under the rotated codec: %q %v", s, err)
	}
	q, _ := after.Converters().Data.ToPayload("new")
	if id := string(q.GetMetadata()[metaKeyID]); id != after.KeyID() || id == before.KeyID() {
		t.Errorf("new payload under key %s (current %s, old %s)", id, after.KeyID(), before.KeyID())
	}
	withoutOld, _ := Parse(hexKey, "")
	if err := withoutOld.Converters().Data.FromPayload(p, &s); err == nil || !strings.Contains(err.Error(), EnvOldKeys) {
		t.Errorf("without the old key: %v (want a hint at %s)", err, EnvOldKeys)
	}
	for _, c := range []struct{ key, old, want string }{
		{"", oldHexKey, EnvOldKeys},
		{hexKey, "nope", EnvOldKeys + ": key 1"},
		{"nope", "", EnvKey},
	} {
		if _, err := Parse(c.key, c.old); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q, %q) = %v, want an error naming %s", c.key, c.old, err, c.want)
		}
	}
	if c, err := Parse("", ""); c != nil || err != nil || c.Converters().Data != nil {
		t.Error("no key must mean no codec")
	}
}

// The failure converter moves a failure's message (and its cause's) out of plain text; DecodeFailures
// restores it in a history read back.
func TestFailureMessagesAreEncodedAndDecoded(t *testing.T) {
	c, _ := Parse(hexKey, "")
	conv := c.Converters()
	err := temporal.NewApplicationErrorWithCause("all candidates failed: provider said QUOTA-TEXT", "Exhausted",
		errors.New("cause: provider said CAUSE-TEXT"))
	f := conv.Failure.ErrorToFailure(err)
	raw, _ := proto.Marshal(f)
	for _, s := range []string{"QUOTA-TEXT", "CAUSE-TEXT"} {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("the failure proto holds %s", s)
		}
	}
	ev := &historypb.HistoryEvent{Attributes: &historypb.HistoryEvent_WorkflowExecutionFailedEventAttributes{
		WorkflowExecutionFailedEventAttributes: &historypb.WorkflowExecutionFailedEventAttributes{Failure: f}}}
	h := &historypb.History{Events: []*historypb.HistoryEvent{ev}}
	DecodeFailures(h, conv.Data)
	got := h.Events[0].GetWorkflowExecutionFailedEventAttributes().GetFailure()
	if !strings.Contains(got.GetMessage(), "QUOTA-TEXT") || !strings.Contains(got.GetCause().GetMessage(), "CAUSE-TEXT") {
		t.Errorf("decoded: %q / %q", got.GetMessage(), got.GetCause().GetMessage())
	}
}
