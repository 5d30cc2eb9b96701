package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// OpenClaw's config is JSON5: comments, unquoted keys, single quotes, trailing commas, hex and
// signed numbers. This small parser keeps key order (profile order depends on it) and the line and
// column of every value, so that a bad value is reported where it is.

type jsonKind int

const (
	jsonNull jsonKind = iota
	jsonBool
	jsonNumber
	jsonString
	jsonArray
	jsonObject
)

func (k jsonKind) String() string {
	return [...]string{"null", "a boolean", "a number", "a string", "an array", "an object"}[k]
}

type jsonMember struct {
	key   string
	value *jsonValue
}

type jsonValue struct {
	kind      jsonKind
	line, col int
	b         bool
	num       float64
	str       string
	arr       []*jsonValue
	obj       []jsonMember
}

// get returns the member named key of an object, or nil.
func (v *jsonValue) get(key string) *jsonValue {
	if v == nil || v.kind != jsonObject {
		return nil
	}
	for _, m := range v.obj {
		if m.key == key {
			return m.value
		}
	}
	return nil
}

// SyntaxError is a JSON5 syntax error at a 1-based line and column.
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

// maxJSONDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxJSONDepth = 200

type json5Parser struct {
	src       string
	pos       int
	line, col int
	depth     int
}

func parseJSON5(src string) (*jsonValue, error) {
	p := &json5Parser{src: src, line: 1, col: 1}
	if strings.HasPrefix(p.src, "\uFEFF") {
		p.advance(3)
	}
	if err := p.skipSpace(); err != nil {
		return nil, err
	}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	if err := p.skipSpace(); err != nil {
		return nil, err
	}
	if p.pos < len(p.src) {
		return nil, p.errorf("unexpected %s after the end of the document", p.describe())
	}
	return v, nil
}

func (p *json5Parser) errorf(format string, args ...any) error {
	return &SyntaxError{Line: p.line, Col: p.col, Msg: fmt.Sprintf(format, args...)}
}

func (p *json5Parser) describe() string {
	if p.pos >= len(p.src) {
		return "end of input"
	}
	r, _ := utf8.DecodeRuneInString(p.src[p.pos:])
	return strconv.QuoteRune(r)
}

func (p *json5Parser) peek() byte {
	if p.pos >= len(p.src) {
		return 0
	}
	return p.src[p.pos]
}

// advance moves n bytes forward, keeping line and column (columns count runes).
func (p *json5Parser) advance(n int) {
	for i := 0; i < n && p.pos < len(p.src); {
		r, size := utf8.DecodeRuneInString(p.src[p.pos:])
		p.pos += size
		i += size
		if r == '\n' {
			p.line++
			p.col = 1
		} else {
			p.col++
		}
	}
}

func (p *json5Parser) skipSpace() error {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			p.advance(1)
		case c == '/' && strings.HasPrefix(p.src[p.pos:], "//"):
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.advance(1)
			}
		case c == '/' && strings.HasPrefix(p.src[p.pos:], "/*"):
			line, col := p.line, p.col
			end := strings.Index(p.src[p.pos+2:], "*/")
			if end < 0 {
				return &SyntaxError{Line: line, Col: col, Msg: "unterminated /* comment"}
			}
			p.advance(end + 4)
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(p.src[p.pos:])
			if r != '\u00a0' && r != '\u2028' && r != '\u2029' && r != '\uFEFF' && !unicode.Is(unicode.Zs, r) {
				return nil
			}
			p.advance(size)
		default:
			return nil
		}
	}
	return nil
}

func (p *json5Parser) value() (*jsonValue, error) {
	line, col := p.line, p.col
	c := p.peek()
	var v *jsonValue
	var err error
	switch {
	case c == '{':
		v, err = p.object()
	case c == '[':
		v, err = p.array()
	case c == '"' || c == '\'':
		var s string
		s, err = p.string()
		v = &jsonValue{kind: jsonString, str: s}
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
		v, err = p.number()
	case p.pos >= len(p.src):
		return nil, p.errorf("unexpected end of input, expected a value")
	default:
		word := p.identifierAhead()
		switch word {
		case "true", "false":
			v = &jsonValue{kind: jsonBool, b: word == "true"}
		case "null":
			v = &jsonValue{kind: jsonNull}
		case "Infinity", "NaN":
			return p.number()
		default:
			return nil, p.errorf("unexpected %s, expected a value", p.describe())
		}
		p.advance(len(word))
	}
	if err != nil {
		return nil, err
	}
	v.line, v.col = line, col
	return v, nil
}

func (p *json5Parser) enter() error {
	p.depth++
	if p.depth > maxJSONDepth {
		return p.errorf("nesting deeper than %d levels", maxJSONDepth)
	}
	return nil
}

func (p *json5Parser) object() (*jsonValue, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.advance(1) // {
	v := &jsonValue{kind: jsonObject}
	seen := map[string]bool{}
	for {
		if err := p.skipSpace(); err != nil {
			return nil, err
		}
		if p.peek() == '}' {
			p.advance(1)
			return v, nil
		}
		keyLine, keyCol := p.line, p.col
		var key string
		switch c := p.peek(); {
		case c == '"' || c == '\'':
			s, err := p.string()
			if err != nil {
				return nil, err
			}
			key = s
		default:
			key = p.identifierAhead()
			if key == "" {
				return nil, p.errorf("unexpected %s, expected a key or '}'", p.describe())
			}
			p.advance(len(key))
		}
		if seen[key] {
			return nil, &SyntaxError{Line: keyLine, Col: keyCol, Msg: fmt.Sprintf("duplicate key %q", key)}
		}
		seen[key] = true
		if err := p.skipSpace(); err != nil {
			return nil, err
		}
		if p.peek() != ':' {
			return nil, p.errorf("unexpected %s, expected ':' after key %q", p.describe(), key)
		}
		p.advance(1)
		if err := p.skipSpace(); err != nil {
			return nil, err
		}
		val, err := p.value()
		if err != nil {
			return nil, err
		}
		v.obj = append(v.obj, jsonMember{key: key, value: val})
		if err := p.skipSpace(); err != nil {
			return nil, err
		}
		switch p.peek() {
		case ',':
			p.advance(1)
		case '}':
			p.advance(1)
			return v, nil
		default:
			return nil, p.errorf("unexpected %s, expected ',' or '}'", p.describe())
		}
	}
}

func (p *json5Parser) array() (*jsonValue, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.advance(1) // [
	v := &jsonValue{kind: jsonArray}
	for {
		if err := p.skipSpace(); err != nil {
			return nil, err
		}
		if p.peek() == ']' {
			p.advance(1)
			return v, nil
		}
		el, err := p.value()
		if err != nil {
			return nil, err
		}
		v.arr = append(v.arr, el)
		if err := p.skipSpace(); err != nil {
			return nil, err
		}
		switch p.peek() {
		case ',':
			p.advance(1)
		case ']':
			p.advance(1)
			return v, nil
		default:
			return nil, p.errorf("unexpected %s, expected ',' or ']'", p.describe())
		}
	}
}

// identifierAhead returns the identifier (ECMAScript IdentifierName, without escapes) at pos.
func (p *json5Parser) identifierAhead() string {
	end := p.pos
	for end < len(p.src) {
		r, size := utf8.DecodeRuneInString(p.src[end:])
		ok := r == '_' || r == '$' || unicode.IsLetter(r) || (end > p.pos && (unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Pc, r)))
		if !ok {
			break
		}
		end += size
	}
	return p.src[p.pos:end]
}

func (p *json5Parser) string() (string, error) {
	quote := p.peek()
	startLine, startCol := p.line, p.col
	p.advance(1)
	var b strings.Builder
	for {
		if p.pos >= len(p.src) {
			return "", &SyntaxError{Line: startLine, Col: startCol, Msg: "unterminated string"}
		}
		c := p.src[p.pos]
		switch {
		case c == quote:
			p.advance(1)
			return b.String(), nil
		case c == '\n' || c == '\r':
			return "", p.errorf("newline inside a string (escape it with \\)")
		case c == '\\':
			p.advance(1)
			if err := p.escape(&b); err != nil {
				return "", err
			}
		default:
			r, size := utf8.DecodeRuneInString(p.src[p.pos:])
			b.WriteRune(r)
			p.advance(size)
		}
	}
}

func (p *json5Parser) escape(b *strings.Builder) error {
	if p.pos >= len(p.src) {
		return p.errorf("unterminated escape")
	}
	c := p.src[p.pos]
	simple := map[byte]string{'b': "\b", 'f': "\f", 'n': "\n", 'r': "\r", 't': "\t", 'v': "\v", '0': "\x00",
		'\'': "'", '"': "\"", '\\': "\\", '/': "/"}
	if s, ok := simple[c]; ok && !(c == '0' && p.pos+1 < len(p.src) && p.src[p.pos+1] >= '0' && p.src[p.pos+1] <= '9') {
		b.WriteString(s)
		p.advance(1)
		return nil
	}
	switch c {
	case '\n':
		p.advance(1) // line continuation
		return nil
	case '\r':
		p.advance(1)
		if p.peek() == '\n' {
			p.advance(1)
		}
		return nil
	case 'x', 'u':
		n := 2
		if c == 'u' {
			n = 4
		}
		if p.pos+1+n > len(p.src) {
			return p.errorf("short \\%c escape", c)
		}
		code, err := strconv.ParseUint(p.src[p.pos+1:p.pos+1+n], 16, 32)
		if err != nil {
			return p.errorf("bad \\%c escape %q", c, p.src[p.pos+1:p.pos+1+n])
		}
		p.advance(1 + n)
		r := rune(code)
		if c == 'u' && utf16Surrogate(r) && strings.HasPrefix(p.src[p.pos:], "\\u") && p.pos+6 <= len(p.src) {
			if lo, err := strconv.ParseUint(p.src[p.pos+2:p.pos+6], 16, 32); err == nil && rune(lo) >= 0xDC00 && rune(lo) <= 0xDFFF {
				r = (r-0xD800)<<10 + (rune(lo) - 0xDC00) + 0x10000
				p.advance(6)
			}
		}
		b.WriteRune(r)
		return nil
	}
	if c >= '1' && c <= '9' || c == '0' {
		return p.errorf("octal escapes are not allowed")
	}
	r, size := utf8.DecodeRuneInString(p.src[p.pos:])
	b.WriteRune(r) // JSON5: any other escaped character stands for itself
	p.advance(size)
	return nil
}

func utf16Surrogate(r rune) bool { return r >= 0xD800 && r <= 0xDBFF }

func (p *json5Parser) number() (*jsonValue, error) {
	start := p.pos
	sign := 1.0
	if c := p.peek(); c == '+' || c == '-' {
		if c == '-' {
			sign = -1
		}
		p.advance(1)
	}
	rest := p.src[p.pos:]
	switch {
	case strings.HasPrefix(rest, "Infinity"):
		p.advance(len("Infinity"))
		return &jsonValue{kind: jsonNumber, num: sign * math.Inf(1)}, nil
	case strings.HasPrefix(rest, "NaN"):
		p.advance(len("NaN"))
		return &jsonValue{kind: jsonNumber, num: math.NaN()}, nil
	case strings.HasPrefix(rest, "0x") || strings.HasPrefix(rest, "0X"):
		end := 2
		for end < len(rest) && strings.IndexByte("0123456789abcdefABCDEF", rest[end]) >= 0 {
			end++
		}
		n, err := strconv.ParseUint(rest[2:end], 16, 64)
		if err != nil {
			return nil, p.errorf("bad hexadecimal number %q", rest[:end])
		}
		p.advance(end)
		return &jsonValue{kind: jsonNumber, num: sign * float64(n)}, nil
	}
	end := 0
	for end < len(rest) && strings.IndexByte("0123456789.eE+-", rest[end]) >= 0 {
		if (rest[end] == '+' || rest[end] == '-') && end > 0 && rest[end-1] != 'e' && rest[end-1] != 'E' {
			break
		}
		end++
	}
	text := rest[:end]
	if text == "" || text == "." {
		return nil, p.errorf("bad number %q", p.src[start:p.pos+end])
	}
	n, err := strconv.ParseFloat(text, 64)
	if err != nil || strings.HasPrefix(text, "00") || (len(text) > 1 && text[0] == '0' && text[1] >= '0' && text[1] <= '9') {
		return nil, p.errorf("bad number %q", p.src[start:p.pos+end])
	}
	p.advance(end)
	return &jsonValue{kind: jsonNumber, num: sign * n}, nil
}
