package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/ardanlabs/jinja"
)

// jsonToValue converts JSON into template values keeping object key order:
// templates that print dicts (tojson) must emit keys in request order, as
// Python's dict does, and Go maps have none.
func jsonToValue(raw json.RawMessage) (jinja.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return jinja.Undefined(), fmt.Errorf("decoding template input: %w: %w", ErrMalformed, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return jinja.Undefined(), fmt.Errorf("decoding template input: trailing data: %w", ErrMalformed)
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (jinja.Value, error) {
	tok, err := dec.Token()
	if err != nil {
		return jinja.Undefined(), err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return decodeList(dec)
		}
		if t == '{' {
			return decodeDict(dec)
		}
		return jinja.Undefined(), fmt.Errorf("unexpected %v", t)
	case nil:
		return jinja.None(), nil
	default:
		return jinja.FromGoValue(t), nil
	}
}

func decodeList(dec *json.Decoder) (jinja.Value, error) {
	var items []jinja.Value
	for dec.More() {
		v, err := decodeValue(dec)
		if err != nil {
			return jinja.Undefined(), err
		}
		items = append(items, v)
	}
	if _, err := dec.Token(); err != nil {
		return jinja.Undefined(), err
	}
	if items == nil {
		items = []jinja.Value{}
	}
	return jinja.NewList(items), nil
}

func decodeDict(dec *json.Decoder) (jinja.Value, error) {
	d := jinja.NewDict()
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return jinja.Undefined(), err
		}
		key, _ := k.(string)
		v, err := decodeValue(dec)
		if err != nil {
			return jinja.Undefined(), err
		}
		d.AsDict().Set(key, v)
	}
	if _, err := dec.Token(); err != nil {
		return jinja.Undefined(), err
	}
	return d, nil
}
