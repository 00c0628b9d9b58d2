package extproc

import (
	"encoding/json/jsontext"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pyRepr is Python's repr() of a str: single quotes unless the text holds a
// single quote and no double quote, backslash escapes for the quote, the
// backslash and non-printable characters.
func pyRepr(s string) string {
	var sb strings.Builder
	writePyStr(&sb, s)
	return sb.String()
}

func writePyStr(sb *strings.Builder, s string) {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	sb.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\r':
			sb.WriteString(`\r`)
		case r == '\t':
			sb.WriteString(`\t`)
		case r == ' ' || (r != utf8.RuneError && unicode.IsPrint(r)):
			sb.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(sb, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(sb, `\u%04x`, r)
		default:
			fmt.Fprintf(sb, `\U%08x`, r)
		}
	}
	sb.WriteByte(q)
}

// pyReprJSON is Python's str() of the value json.loads (or pydantic) makes of
// v: dicts and lists as Python prints them, True/False/None, ints in full,
// floats in Python's shortest round-trip form.
func pyReprJSON(v jsontext.Value) (string, error) {
	var sb strings.Builder
	dec := jsontext.NewDecoder(strings.NewReader(string(v)))
	if err := writePyValue(&sb, dec); err != nil {
		return "", err
	}
	return sb.String(), nil
}

func writePyValue(sb *strings.Builder, dec *jsontext.Decoder) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case 'n':
		sb.WriteString("None")
	case 't':
		sb.WriteString("True")
	case 'f':
		sb.WriteString("False")
	case '"':
		writePyStr(sb, tok.String())
	case '0':
		return writePyNumber(sb, tok.String())
	case '[':
		return writePySeq(sb, dec, ']', "[", "]", false)
	case '{':
		return writePySeq(sb, dec, '}', "{", "}", true)
	default:
		return fmt.Errorf("unexpected JSON token %v", tok.Kind())
	}
	return nil
}

func writePySeq(sb *strings.Builder, dec *jsontext.Decoder, end jsontext.Kind, open, close string, dict bool) error {
	sb.WriteString(open)
	for i := 0; dec.PeekKind() != end; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		if dict {
			key, err := dec.ReadToken()
			if err != nil {
				return err
			}
			writePyStr(sb, key.String())
			sb.WriteString(": ")
		}
		if err := writePyValue(sb, dec); err != nil {
			return err
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	sb.WriteString(close)
	return nil
}

// writePyNumber writes a JSON number as Python's json module reads and
// prints it: without fraction or exponent an int, otherwise a float.
func writePyNumber(sb *strings.Builder, num string) error {
	if !strings.ContainsAny(num, ".eE") {
		n, ok := new(big.Int).SetString(num, 10)
		if !ok {
			return fmt.Errorf("bad JSON number %q", num)
		}
		sb.WriteString(n.String())
		return nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil && !math.IsInf(f, 0) {
		return err
	}
	sb.WriteString(pyFloat(f))
	return nil
}

// pyFloat is Python's repr() of a float.
func pyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	if exp < -4 || exp >= 16 {
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		return fmt.Sprintf("%se%s%02d", mant, sign, exp)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}
