package provider

import (
	"io"
	"strings"
	"testing"
)

// SSE comment lines are spotted wherever the reads split the stream, and colons inside a line are
// not comments.
func TestCommentLinesAreSpottedAcrossReads(t *testing.T) {
	cases := []struct {
		reads []string
		want  []bool // a comment spotted in each read
	}{
		{[]string{`data: {"a":1}` + "\n\n"}, []bool{false}},
		{[]string{": ping\n\n"}, []bool{true}},
		{[]string{"data: {}\n\n: ping\n\n"}, []bool{true}},
		{[]string{"data: {}\n", ": ping\n\n"}, []bool{false, true}},
		{[]string{"data: {}\r\n", "\r\n:ping\r\n\r\n"}, []bool{false, true}},
		{[]string{`data: {"k"`, `: 1}` + "\n\n"}, []bool{false, false}},
		{[]string{"event: ping\ndata: {\"type\":\"ping\"}\n\n"}, []bool{false}},
	}
	for _, c := range cases {
		spotted := 0
		d := &doneSpotter{cap: &capture{}, onComment: func() { spotted++ }}
		for i, r := range c.reads {
			before := spotted
			d.ReadCloser = io.NopCloser(strings.NewReader(r))
			buf := make([]byte, 64)
			if _, err := d.Read(buf); err != nil {
				t.Fatal(err)
			}
			if got := spotted > before; got != c.want[i] {
				t.Errorf("%q, read %d: spotted %v, want %v", c.reads, i, got, c.want[i])
			}
		}
	}
}
