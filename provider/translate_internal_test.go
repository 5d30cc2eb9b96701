package provider

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// randomTurn is a conversation in an arbitrary order of roles, with tool calls and their results
// (each result after its call, as CheckTurn demands), reasoning and blank text.
func randomTurn(r *rand.Rand) (msgs []Message, results int) {
	var open []string
	calls := 0
	for range 2 + r.IntN(12) {
		m := Message{}
		switch r.IntN(5) {
		case 0:
			m.Role = RoleSystem
			m.Content = []Part{TextPart("sys")}
		case 1, 2:
			m.Role = RoleAssistant
			for range 1 + r.IntN(4) {
				switch r.IntN(5) {
				case 0:
					m.Content = append(m.Content, TextPart("a"))
				case 1:
					m.Content = append(m.Content, TextPart(" "))
				case 2:
					m.Content = append(m.Content, Part{Type: PartReasoning, Text: "t", Signature: "s"})
				default:
					calls++
					id := fmt.Sprintf("call.%d", calls)
					open = append(open, id)
					m.Content = append(m.Content, Part{Type: PartToolCall, CallID: id, Name: "f"})
				}
			}
		case 3:
			if len(open) == 0 {
				continue
			}
			m.Role = RoleTool
			n := 1 + r.IntN(len(open))
			for _, id := range open[:n] {
				m.Content = append(m.Content, Part{Type: PartToolResult, CallID: id, Result: []Part{TextPart("r")}})
				results++
			}
			open = open[n:]
		default:
			m.Role = RoleUser
			m.Content = []Part{TextPart("u")}
		}
		msgs = append(msgs, m)
	}
	return msgs, results
}

// Whatever the order of the caller's messages, the Anthropic messages alternate roles, are never
// empty, put tool results first in the user message right after the call, and thinking first in
// the assistant message.
func TestAnthropicMessagesKeepTheirInvariants(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		msgs, results := randomTurn(r)
		_, out := anthropicMessages(msgs, nil)
		seen := 0
		for j, m := range out {
			if len(m.Content) == 0 {
				t.Fatalf("turn %d: message %d is empty: %+v", i, j, msgs)
			}
			if j > 0 && out[j-1].Role == m.Role {
				t.Fatalf("turn %d: messages %d and %d are both %s", i, j-1, j, m.Role)
			}
			lead := true
			for _, b := range m.Content {
				if leads(b) && !lead {
					t.Fatalf("turn %d: message %d has %T after other blocks: %+v", i, j, b, m.Content)
				}
				lead = lead && leads(b)
				tr, ok := b.(anthropicToolResult)
				if !ok {
					continue
				}
				seen++
				found := false
				if j > 0 {
					for _, c := range out[j-1].Content {
						if tu, ok := c.(anthropicToolUse); ok && tu.ID == tr.ToolUseID {
							found = true
						}
					}
				}
				if !found {
					t.Fatalf("turn %d: the result for %s is not right after its call: %+v", i, tr.ToolUseID, out)
				}
			}
		}
		if seen != results {
			t.Fatalf("turn %d: %d tool results sent, want %d", i, seen, results)
		}
	}
}
