package extproc

import (
	"bytes"
	"encoding/json/jsontext"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
)

// pythonDumps writes a JSON value as Python's json.dumps does by default
// (", " and ": " separators, non-ASCII escaped, floats as repr): vLLM turns
// an Anthropic tool_use input into its chat tool call's arguments with it,
// and a Harmony prompt carries the arguments verbatim.
func pythonDumps(v jsontext.Value) (string, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(v), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	var b strings.Builder
	if err := pyValue(&b, dec); err != nil {
		return "", err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return "", fmt.Errorf("trailing data")
	}
	return b.String(), nil
}

func pyValue(b *strings.Builder, dec *jsontext.Decoder) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case 'n':
		b.WriteString("null")
	case 't':
		b.WriteString("true")
	case 'f':
		b.WriteString("false")
	case '"':
		pyString(b, tok.String())
	case '0':
		b.WriteString(pyNumber(tok.String()))
	case '[':
		b.WriteByte('[')
		for i := 0; dec.PeekKind() != ']'; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := pyValue(b, dec); err != nil {
				return err
			}
		}
		_, err = dec.ReadToken()
		b.WriteByte(']')
	case '{':
		return pyObject(b, dec)
	}
	return err
}

// pyObject keeps a repeated key at its first place with its last value, as
// a Python dict does.
func pyObject(b *strings.Builder, dec *jsontext.Decoder) error {
	var keys, vals []string
	for dec.PeekKind() != '}' {
		k, err := dec.ReadToken()
		if err != nil {
			return err
		}
		key := k.String()
		var vb strings.Builder
		if err := pyValue(&vb, dec); err != nil {
			return err
		}
		if i := indexOf(keys, key); i >= 0 {
			vals[i] = vb.String()
			continue
		}
		keys, vals = append(keys, key), append(vals, vb.String())
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		pyString(b, k)
		b.WriteString(": " + vals[i])
	}
	b.WriteByte('}')
	return nil
}

func indexOf(keys []string, k string) int {
	for i, x := range keys {
		if x == k {
			return i
		}
	}
	return -1
}

func pyString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || (r > 0x7e && r <= 0xffff):
			fmt.Fprintf(b, `\u%04x`, r)
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(b, `\u%04x\u%04x`, hi, lo)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// pyNumber is Python's text for a JSON number it read: an integer's digits
// (any size), a float's repr.
func pyNumber(text string) string {
	if !strings.ContainsAny(text, ".eE") {
		if text == "-0" {
			return "0"
		}
		return text
	}
	f, err := strconv.ParseFloat(text, 64)
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case err != nil:
		return text
	}
	return pyFloat(f) // pyrepr.go
}
