// Package configfile decodes a YAML configuration file into a struct with
// JSON tags as strictly as sigs.k8s.io/yaml.UnmarshalStrict (unknown and
// repeated keys are errors) and says where a problem is: "path:line: message".
package configfile

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// Decode decodes the YAML file at path into v, a pointer to a struct with
// JSON tags, exactly as sigs.k8s.io/yaml.UnmarshalStrict does:
// unknown and duplicate keys are errors. The decode itself is left to
// sigs.k8s.io/yaml so the file keeps JSON-tag semantics; this function only
// finds where a problem is, and reports it as "path:line: message" when it
// can, the way compilers do, so an editor can jump to it.
func Decode(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading config: %w", err)
	}
	return DecodeBytes(b, path, v)
}

// DecodeBytes is Decode for a file's contents; path names it in errors.
func DecodeBytes(b []byte, path string, v any) error {
	decodeErr := yaml.UnmarshalStrict(b, v)
	if decodeErr == nil {
		return nil
	}
	// sigs.k8s.io/yaml names the line of a syntax error, but not of what it
	// finds after converting the file to JSON: read the file again as a
	// tree of nodes, which keep their lines, and find the node at fault.
	var doc yamlv3.Node
	if yamlv3.Unmarshal(b, &doc) != nil {
		return configError(path, 0, decodeErr.Error())
	}
	if n, first := duplicateKey(&doc); n != nil {
		return configError(path, n.Line, fmt.Sprintf("duplicate key %q (first at line %d)", n.Value, first.Line))
	}
	if line, msg := locate(&doc, reflect.TypeOf(v), ""); line > 0 {
		return configError(path, line, msg)
	}
	return configError(path, 0, decodeErr.Error())
}

// configLine is how the YAML parsers name a line in their messages.
var configLine = regexp.MustCompile(`yaml: (?:unmarshal errors:\s*)?line (\d+): `)

// configError formats a problem in path at line (0: unknown, unless msg
// names it itself).
func configError(path string, line int, msg string) error {
	if line == 0 {
		if m := configLine.FindStringSubmatchIndex(msg); m != nil {
			line, _ = strconv.Atoi(msg[m[2]:m[3]])
			msg = msg[m[1]:]
		}
	}
	if line == 0 {
		return fmt.Errorf("parsing config %s: %s", path, msg)
	}
	return fmt.Errorf("parsing config %s:%d: %s", path, line, msg)
}

// duplicateKey returns the first key that repeats an earlier key of the same
// mapping, and that earlier key.
func duplicateKey(n *yamlv3.Node) (dup, first *yamlv3.Node) {
	if n.Kind == yamlv3.MappingNode {
		seen := map[string]*yamlv3.Node{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yamlv3.ScalarNode || k.Value == "<<" {
				continue
			}
			if f, ok := seen[k.Value]; ok {
				return k, f
			}
			seen[k.Value] = k
		}
	}
	for _, c := range n.Content {
		if dup, first := duplicateKey(c); dup != nil {
			return dup, first
		}
	}
	return nil, nil
}

// FileSchema is implemented by a type that decodes itself (UnmarshalJSON)
// from a file layout other than its Go fields: FileSchema returns a value
// of a type with that layout, which error locating walks instead, so a
// problem inside the type is still reported with its line and key.
type FileSchema interface {
	FileSchema() any
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// locate walks n alongside the Go type t that it decodes into and returns
// the line and message of the first node that does not fit: a key t has no
// field for, or a value that does not decode into its field. key is the
// dotted path of n, for the message.
func locate(n *yamlv3.Node, t reflect.Type, key string) (int, string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n.Kind {
	case yamlv3.DocumentNode:
		for _, c := range n.Content {
			if line, msg := locate(c, t, key); line > 0 {
				return line, msg
			}
		}
		return 0, ""
	case yamlv3.AliasNode:
		return locate(n.Alias, t, key)
	}
	if s, ok := reflect.New(t).Interface().(FileSchema); ok {
		t = reflect.TypeOf(s.FileSchema())
	}
	custom := reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler)
	switch {
	case custom:
	case t.Kind() == reflect.Struct && n.Kind == yamlv3.MappingNode:
		return locateFields(n, t, key)
	case t.Kind() == reflect.Map && n.Kind == yamlv3.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if line, msg := locate(n.Content[i+1], t.Elem(), join(key, n.Content[i].Value)); line > 0 {
				return line, msg
			}
		}
		return 0, ""
	case t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8 && n.Kind == yamlv3.SequenceNode:
		for i, c := range n.Content {
			if line, msg := locate(c, t.Elem(), fmt.Sprintf("%s[%d]", key, i)); line > 0 {
				return line, msg
			}
		}
		return 0, ""
	}
	return decodeNode(n, t, key)
}

func locateFields(n *yamlv3.Node, t reflect.Type, key string) (int, string) {
	fields := jsonFields(t, map[string]reflect.Type{})
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Value == "<<" {
			continue
		}
		ft, ok := fieldType(fields, k.Value)
		if !ok {
			return k.Line, fmt.Sprintf("unknown field %q", join(key, k.Value))
		}
		if line, msg := locate(n.Content[i+1], ft, join(key, k.Value)); line > 0 {
			return line, msg
		}
	}
	return 0, ""
}

// decodeNode decodes n alone into a fresh t, as the whole file would be.
func decodeNode(n *yamlv3.Node, t reflect.Type, key string) (int, string) {
	b, err := yamlv3.Marshal(n)
	if err != nil {
		return 0, ""
	}
	if err := yaml.UnmarshalStrict(b, reflect.New(t).Interface()); err != nil {
		if key == "" {
			return n.Line, jsonMessage(err)
		}
		return n.Line, fmt.Sprintf("%s: %s", key, jsonMessage(err))
	}
	return 0, ""
}

// jsonMessage drops the wrapping sigs.k8s.io/yaml adds around the decoder's
// own message.
func jsonMessage(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("cannot use %s as %s", te.Value, te.Type)
	}
	msg := err.Error()
	for _, p := range []string{"error unmarshaling JSON: ", "while decoding JSON: ", "json: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return msg
}

// jsonFields maps the JSON names of t's fields, including those promoted
// from embedded structs, to their types, as encoding/json sees them.
func jsonFields(t reflect.Type, out map[string]reflect.Type) map[string]reflect.Type {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				jsonFields(ft, out)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// fieldType finds key among fields: an exact match first, then, like
// encoding/json, one that differs only in case.
func fieldType(fields map[string]reflect.Type, key string) (reflect.Type, bool) {
	if t, ok := fields[key]; ok {
		return t, true
	}
	for name, t := range fields {
		if strings.EqualFold(name, key) {
			return t, true
		}
	}
	return nil, false
}

func join(key, k string) string {
	if key == "" {
		return k
	}
	return key + "." + k
}
