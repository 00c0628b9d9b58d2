package tokenizer

import (
	"bytes"
	"encoding/json"
	"encoding/json/jsontext"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// hjson is a JSON value as openai_harmony holds a tool's parameters: a
// serde_json value with object keys in insertion order (a repeated key keeps
// its first place and its last value, as Python's json and serde's ordered
// maps both do). Numbers keep their text; see serdeNumber.
type hjson struct {
	kind  jsontext.Kind // 'n', 't', 'f', '"', '0', '[', '{'
	str   string        // a string's value or a number's text
	items []*hjson
	keys  []string
	vals  []*hjson
}

func parseHJSON(raw []byte) (*hjson, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	v, err := decodeHJSON(dec)
	if err != nil {
		return nil, fmt.Errorf("decoding harmony input: %w: %w", ErrMalformed, err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, fmt.Errorf("decoding harmony input: trailing data: %w", ErrMalformed)
	}
	return v, nil
}

func decodeHJSON(dec *jsontext.Decoder) (*hjson, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	v := &hjson{kind: tok.Kind()}
	switch v.kind {
	case '"', '0':
		v.str = tok.String()
	case '[':
		for dec.PeekKind() != ']' {
			it, err := decodeHJSON(dec)
			if err != nil {
				return nil, err
			}
			v.items = append(v.items, it)
		}
		_, err = dec.ReadToken()
	case '{':
		for dec.PeekKind() != '}' {
			k, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			key := k.String()
			val, err := decodeHJSON(dec)
			if err != nil {
				return nil, err
			}
			v.set(key, val)
		}
		_, err = dec.ReadToken()
	}
	return v, err
}

func (v *hjson) set(key string, val *hjson) {
	for i, k := range v.keys {
		if k == key {
			v.vals[i] = val
			return
		}
	}
	v.keys, v.vals = append(v.keys, key), append(v.vals, val)
}

// get is serde's Value::get: nil unless v is an object with the key.
func (v *hjson) get(key string) *hjson {
	if v == nil || v.kind != '{' {
		return nil
	}
	for i, k := range v.keys {
		if k == key {
			return v.vals[i]
		}
	}
	return nil
}

func (v *hjson) isString() bool { return v != nil && v.kind == '"' }
func (v *hjson) isArray() bool  { return v != nil && v.kind == '[' }

// text is the string's value when v is a string.
func (v *hjson) text() (string, bool) {
	if v.isString() {
		return v.str, true
	}
	return "", false
}

func (v *hjson) isTrue() bool { return v != nil && v.kind == 't' }

// display is serde_json's Display of a value: compact JSON.
func (v *hjson) display() string {
	var b strings.Builder
	v.writeJSON(&b)
	return b.String()
}

func (v *hjson) writeJSON(b *strings.Builder) {
	switch v.kind {
	case 'n':
		b.WriteString("null")
	case 't':
		b.WriteString("true")
	case 'f':
		b.WriteString("false")
	case '0':
		b.WriteString(serdeNumber(v.str))
	case '"':
		writeSerdeString(b, v.str)
	case '[':
		b.WriteByte('[')
		for i, it := range v.items {
			if i > 0 {
				b.WriteByte(',')
			}
			it.writeJSON(b)
		}
		b.WriteByte(']')
	case '{':
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeSerdeString(b, k)
			b.WriteByte(':')
			v.vals[i].writeJSON(b)
		}
		b.WriteByte('}')
	}
}

// writeSerdeString quotes s as serde_json does: \" \\ \b \f \n \r \t, other
// control characters as \u00xx, everything else as it is.
func writeSerdeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// serdeNumber prints a JSON number as it reaches openai_harmony: Python
// reads it (integers exact, others as float64) and writes it back, serde
// reads an integer that fits int64 or uint64 as one and anything else as a
// float64, and prints a float the way the ryu crate does.
func serdeNumber(text string) string {
	if !strings.ContainsAny(text, ".eE") {
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return strconv.FormatInt(n, 10)
		}
		if _, err := strconv.ParseUint(text, 10, 64); err == nil {
			return text
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !math.IsInf(f, 0) {
		return text
	}
	return ryuFormat(f)
}

// ryuFormat is serde_json's shortest float64 text (checked against the
// oss-harmony wheel vLLM 0.33 installs): plain decimals with at least one
// fraction digit from 1e-5 up to 1e16, else d.ddde-x or d.ddde+x without
// padding.
func ryuFormat(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return "null"
	}
	sign := ""
	if math.Signbit(f) {
		sign, f = "-", -f
	}
	if f == 0 {
		return sign + "0.0"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	mant, e10, _ := strings.Cut(s, "e")
	digits := strings.Replace(mant, ".", "", 1)
	e, _ := strconv.Atoi(e10)
	n := len(digits)
	kk := e + 1
	k := kk - n
	switch {
	case k >= 0 && kk <= 16:
		return sign + digits + strings.Repeat("0", k) + ".0"
	case kk > 0 && kk <= 16:
		return sign + digits[:kk] + "." + digits[kk:]
	case kk > -5 && kk <= 0:
		return sign + "0." + strings.Repeat("0", -kk) + digits
	}
	exp := "e" + strconv.Itoa(kk-1)
	if kk > 0 {
		exp = "e+" + strconv.Itoa(kk-1)
	}
	if n == 1 {
		return sign + digits + exp
	}
	return sign + digits[:1] + "." + digits[1:] + exp
}

func isEnumSchema(s *hjson) bool {
	e := s.get("enum")
	return e.isArray() && len(e.items) > 0
}

// defaultComment is the text after "default: " for a schema's default.
// quoteEnum says whether a string default of an enum is printed as JSON
// (the top-level oneOf branch) rather than as it is.
func defaultComment(s, def *hjson, quoteEnum bool) string {
	if str, ok := def.text(); ok {
		switch {
		case !isEnumSchema(s):
			return `"` + str + `"`
		case !quoteEnum:
			return str
		}
	}
	return def.display()
}

func withNullable(s *hjson, t string) string {
	if s.get("nullable").isTrue() && !strings.Contains(t, "null") {
		return t + " | null"
	}
	return t
}

// harmonyTypeScript is openai_harmony's json_schema_to_typescript: the
// TypeScript-like type its tool namespaces print for a JSON schema.
func harmonyTypeScript(s *hjson, indent string) string {
	if one := s.get("oneOf"); one.isArray() {
		var b strings.Builder
		for _, v := range one.items {
			b.WriteString("\n" + indent + " | ")
			b.WriteString(withNullable(v, harmonyTypeScript(v, indent+"   ")))
			var tc []string
			if d, ok := v.get("description").text(); ok {
				tc = append(tc, d)
			}
			if def := v.get("default"); def != nil {
				tc = append(tc, "default: "+defaultComment(v, def, true))
			}
			if len(tc) > 0 {
				b.WriteString(" // " + strings.Join(tc, " "))
			}
		}
		return b.String()
	}
	typ := s.get("type")
	if typ.isArray() {
		var ts []string
		for _, t := range typ.items {
			if str, ok := t.text(); ok {
				if str == "integer" {
					str = "number"
				}
				ts = append(ts, str)
			}
		}
		if len(ts) > 0 {
			return strings.Join(ts, " | ")
		}
	}
	t, ok := typ.text()
	if !ok {
		return "any"
	}
	switch t {
	case "object":
		return harmonyObject(s, indent)
	case "string":
		var alts []string
		if e := s.get("enum"); e.isArray() {
			for _, v := range e.items {
				if str, ok := v.text(); ok {
					alts = append(alts, `"`+str+`"`)
				}
			}
		}
		if len(alts) > 0 {
			return strings.Join(alts, " | ")
		}
		return "string"
	case "number", "integer":
		return "number"
	case "boolean":
		return "boolean"
	case "array":
		if items := s.get("items"); items != nil {
			return harmonyTypeScript(items, indent) + "[]"
		}
		return "Array<any>"
	}
	return "any"
}

func harmonyObject(s *hjson, indent string) string {
	var b strings.Builder
	if d, ok := s.get("description").text(); ok {
		b.WriteString(indent + "// " + d + "\n")
	}
	b.WriteString("{\n")
	if props := s.get("properties"); props != nil && props.kind == '{' {
		required := map[string]bool{}
		if r := s.get("required"); r.isArray() {
			for _, n := range r.items {
				if str, ok := n.text(); ok {
					required[str] = true
				}
			}
		}
		for i, key := range props.keys {
			harmonyProperty(&b, key, props.vals[i], required[key], indent)
		}
	}
	b.WriteString(indent + "}")
	return b.String()
}

func harmonyProperty(b *strings.Builder, key string, v *hjson, required bool, indent string) {
	opt := "?"
	if required {
		opt = ""
	}
	if t, ok := v.get("title").text(); ok {
		b.WriteString(indent + "// " + t + "\n" + indent + "//\n")
	}
	one := v.get("oneOf")
	if one == nil {
		if d, ok := v.get("description").text(); ok {
			b.WriteString(indent + "// " + d + "\n")
		}
	}
	if ex := v.get("examples"); ex.isArray() && len(ex.items) > 0 {
		b.WriteString(indent + "// Examples:\n")
		for _, e := range ex.items {
			if str, ok := e.text(); ok {
				b.WriteString(indent + "// - \"" + str + "\"\n")
			}
		}
	}
	if one.isArray() {
		harmonyOneOfProperty(b, key, opt, v, one, indent)
		return
	}
	b.WriteString(indent + key + opt + ": ")
	b.WriteString(withNullable(v, harmonyTypeScript(v, indent+"    ")))
	b.WriteByte(',')
	if def := v.get("default"); one == nil && def != nil {
		b.WriteString(" // default: " + defaultComment(v, def, false))
	}
	b.WriteByte('\n')
}

func harmonyOneOfProperty(b *strings.Builder, key, opt string, v, one *hjson, indent string) {
	desc, hasDesc := v.get("description").text()
	skip := false
	if hasDesc && len(one.items) > 0 {
		if fd, ok := one.items[0].get("description").text(); ok && fd == desc {
			skip = true
		}
	}
	above := false
	if !skip && hasDesc {
		b.WriteString(indent + "// " + desc + "\n")
		above = true
	}
	if def := v.get("default"); def != nil {
		b.WriteString(indent + "// default: " + defaultComment(v, def, false) + "\n")
	}
	b.WriteString(indent + key + opt + ":\n")
	for i, variant := range one.items {
		b.WriteString(indent + " | ")
		b.WriteString(withNullable(variant, harmonyTypeScript(variant, indent+"   ")))
		var tc []string
		if !(i == 0 && above) {
			if d, ok := variant.get("description").text(); ok && (!hasDesc || d != desc) {
				tc = append(tc, d)
			}
		}
		if def := variant.get("default"); def != nil {
			tc = append(tc, "default: "+defaultComment(variant, def, false))
		}
		if len(tc) > 0 {
			b.WriteString(" // " + strings.Join(tc, " "))
		}
		b.WriteByte('\n')
	}
	b.WriteString(indent + ",\n")
}

// rustLines is Rust's str::lines: split at \n, a trailing \r dropped from
// each line, no empty line after a final \n.
func rustLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// harmonyTool is a function tool as openai_harmony's ToolDescription holds
// it: parameters nil when the request has none (or null).
type harmonyTool struct {
	name, description string
	parameters        *hjson
}

// harmonyToolsSection is the "# Tools" section of a developer message with
// a functions namespace (template_tools_section).
func harmonyToolsSection(tools []harmonyTool) string {
	parts := []string{"## functions\n", "namespace functions {\n"}
	for _, t := range tools {
		for _, l := range rustLines(t.description) {
			parts = append(parts, "// "+l)
		}
		if t.parameters != nil {
			parts = append(parts, "type "+t.name+" = (_: "+harmonyTypeScript(t.parameters, "")+") => any;\n")
		} else {
			parts = append(parts, "type "+t.name+" = () => any;\n")
		}
	}
	parts = append(parts, "} // namespace functions")
	return "# Tools\n\n" + strings.Join(parts, "\n")
}

// harmonyChatTools reads a chat request's tools (already checked by
// normalizeTools) into ToolDescriptions, as vLLM's create_tool_definition
// does: a missing or null description is empty.
func harmonyChatTools(raw json.RawMessage) ([]harmonyTool, error) {
	v, err := parseHJSON(raw)
	if err != nil {
		return nil, err
	}
	var out []harmonyTool
	for _, t := range v.items {
		fn := t.get("function")
		name, _ := fn.get("name").text()
		desc, _ := fn.get("description").text()
		p := fn.get("parameters")
		if p != nil && p.kind == 'n' {
			p = nil
		}
		out = append(out, harmonyTool{name: name, description: desc, parameters: p})
	}
	return out, nil
}
