package scenario

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// Check compares the output with the scenario's expect as SCENARIOS.md says: objects as subsets,
// arrays element by element with the same length, null for absent, {"$prefix": …} for a string
// prefix. It returns one line per mismatch, naming the field.
func Check(expect json.RawMessage, out *Output) ([]string, error) {
	if len(expect) == 0 {
		return nil, nil
	}
	var want any
	if err := json.Unmarshal(expect, &want); err != nil {
		return nil, fmt.Errorf("expect: %w", err)
	}
	data, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	var got any
	if err := json.Unmarshal(data, &got); err != nil {
		return nil, err
	}
	var diffs []string
	match("expect", want, got, true, &diffs)
	return diffs, nil
}

func allNull(m map[string]any) bool {
	for _, v := range m {
		if v != nil {
			return false
		}
	}
	return true
}

func match(path string, want, got any, present bool, diffs *[]string) {
	switch w := want.(type) {
	case nil:
		if present && got != nil {
			*diffs = append(*diffs, fmt.Sprintf("%s: want absent or null, got %s", path, show(got)))
		}
	case map[string]any:
		if p, ok := w["$prefix"].(string); ok && len(w) == 1 {
			s, isString := got.(string)
			if !present || !isString || !strings.HasPrefix(s, p) {
				*diffs = append(*diffs, fmt.Sprintf("%s: want a string starting %q, got %s", path, p, show(got)))
			}
			return
		}
		g, isMap := got.(map[string]any)
		if !present || got == nil {
			if allNull(w) {
				return
			}
			*diffs = append(*diffs, fmt.Sprintf("%s: missing, want %s", path, show(want)))
			return
		}
		if !isMap {
			*diffs = append(*diffs, fmt.Sprintf("%s: want an object, got %s", path, show(got)))
			return
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v, ok := g[k]
			match(path+"."+k, w[k], v, ok, diffs)
		}
	case []any:
		g, isArray := got.([]any)
		if !present || !isArray {
			*diffs = append(*diffs, fmt.Sprintf("%s: want an array of %d, got %s", path, len(w), show(got)))
			return
		}
		if len(g) != len(w) {
			*diffs = append(*diffs, fmt.Sprintf("%s: want %d elements, got %d: %s", path, len(w), len(g), show(got)))
			return
		}
		for i := range w {
			match(fmt.Sprintf("%s[%d]", path, i), w[i], g[i], true, diffs)
		}
	default:
		if !present {
			*diffs = append(*diffs, fmt.Sprintf("%s: missing, want %s", path, show(want)))
			return
		}
		if fmt.Sprint(want) != fmt.Sprint(got) {
			*diffs = append(*diffs, fmt.Sprintf("%s: want %s, got %s", path, show(want), show(got)))
		}
	}
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
