package config

import "testing"

func TestJSON5Values(t *testing.T) {
	v, err := parseJSON5(`{hex: 0x1F, neg: -.5, plus: +3, inf: Infinity, s: 'it\'s', d: "a\
b", u: "\u00e9\uD83D\uDE00", t: true, n: null, arr: [1, 2,],}`)
	if err != nil {
		t.Fatal(err)
	}
	if v.get("hex").num != 31 || v.get("neg").num != -0.5 || v.get("plus").num != 3 || v.get("inf").num < 1e308 {
		t.Errorf("numbers: %+v", v)
	}
	if v.get("s").str != "it's" || v.get("d").str != "ab" || v.get("u").str != "é😀" {
		t.Errorf("strings: %q %q %q", v.get("s").str, v.get("d").str, v.get("u").str)
	}
	if !v.get("t").b || v.get("n").kind != jsonNull || len(v.get("arr").arr) != 2 {
		t.Errorf("other values: %+v", v)
	}
}
