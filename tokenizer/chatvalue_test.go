package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/ardanlabs/jinja"
)

// oracleJSONToValue is the encoding/json Decoder.Token conversion that
// jsonToValue replaced; the tests hold the faster one to it.
func oracleJSONToValue(raw []byte) (jinja.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := oracleValue(dec)
	if err != nil {
		return v, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return v, fmt.Errorf("trailing data")
	}
	return v, nil
}

func oracleValue(dec *json.Decoder) (jinja.Value, error) {
	tok, err := dec.Token()
	if err != nil {
		return jinja.Undefined(), err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			items := []jinja.Value{}
			for dec.More() {
				v, err := oracleValue(dec)
				if err != nil {
					return v, err
				}
				items = append(items, v)
			}
			_, err := dec.Token()
			return jinja.NewList(items), err
		}
		if t == '{' {
			d := jinja.NewDict()
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return d, err
				}
				key, _ := k.(string)
				v, err := oracleValue(dec)
				if err != nil {
					return v, err
				}
				d.AsDict().Set(key, v)
			}
			_, err := dec.Token()
			return d, err
		}
		return jinja.Undefined(), fmt.Errorf("unexpected %v", t)
	case nil:
		return jinja.None(), nil
	default:
		return jinja.FromGoValue(t), nil
	}
}

// dumpValue prints a value with its kinds, so equal dumps mean equal values
// as far as a template can tell (type, order, content).
func dumpValue(b *strings.Builder, v jinja.Value) {
	switch {
	case v.IsList():
		b.WriteString("[")
		for _, it := range v.AsList().Items {
			dumpValue(b, it)
			b.WriteString(",")
		}
		b.WriteString("]")
	case v.IsDict():
		d := v.AsDict()
		b.WriteString("{")
		for _, k := range d.OrderedKeys() {
			it, _ := d.Get(k)
			fmt.Fprintf(b, "%q:", k)
			dumpValue(b, it)
			b.WriteString(",")
		}
		b.WriteString("}")
	case v.IsInt():
		fmt.Fprintf(b, "int(%d)", v.AsInt())
	case v.IsFloat():
		fmt.Fprintf(b, "float(%v)", v.AsFloat())
	case v.IsString():
		fmt.Fprintf(b, "str(%q)", v.AsString())
	case v.IsBool():
		fmt.Fprintf(b, "bool(%v)", v.AsBool())
	case v.IsNone():
		b.WriteString("none")
	default:
		fmt.Fprintf(b, "other(%v)", v)
	}
}

func checkJSONToValue(t *testing.T, raw string) {
	t.Helper()
	want, werr := oracleJSONToValue([]byte(raw))
	got, gerr := jsonToValue(json.RawMessage(raw))
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("jsonToValue(%q) error = %v, encoding/json error = %v", raw, gerr, werr)
	}
	if werr != nil {
		return
	}
	var a, b strings.Builder
	dumpValue(&a, got)
	dumpValue(&b, want)
	if a.String() != b.String() {
		t.Fatalf("jsonToValue(%q)\n got %s\nwant %s", raw, a.String(), b.String())
	}
}

var jsonValueCases = []struct{ name, raw string }{
	{"messages", `[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]`},
	{"key order kept", `{"z":1,"a":2,"m":{"y":[],"b":{}}}`},
	{"numbers", `[0, -1, 1.5, 1e3, 12345678901234567890, 2.0, -0]`},
	{"literals", `[true, false, null]`},
	{"escapes", `["a\"b\\c\n\u00e9\ud83d\ude00"]`},
	{"duplicate keys", `{"a":1,"a":2}`},
	{"invalid utf-8", "[\"a\xffb\"]"},
	{"whitespace", " \n[ 1 , 2 ]\t"},
	{"trailing data", `[1] [2]`},
	{"unclosed", `[1, 2`},
	{"trailing comma", `[1,]`},
	{"bare word", `nope`},
	{"empty", ``},
	{"object key not string", `{1:2}`},
}

func TestJSONToValue(t *testing.T) {
	for _, tc := range jsonValueCases {
		t.Run(tc.name, func(t *testing.T) { checkJSONToValue(t, tc.raw) })
	}
}

func FuzzJSONToValue(f *testing.F) {
	for _, tc := range jsonValueCases {
		f.Add(tc.raw)
	}
	f.Fuzz(func(t *testing.T, raw string) { checkJSONToValue(t, raw) })
}

func BenchmarkJSONToValue(b *testing.B) {
	for _, n := range []int{2, 20, 200} {
		var msgs []map[string]string
		for i := range n {
			msgs = append(msgs, map[string]string{"role": "user", "content": prose(i, 150)})
		}
		raw, _ := json.Marshal(msgs)
		b.Run(fmt.Sprintf("%dmsgs", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, err := jsonToValue(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
