package tokenizer

import (
	"bytes"
	"encoding/json"
	"encoding/json/jsontext"
	"fmt"
	"io"

	"github.com/ardanlabs/jinja"
)

// jsonToValue converts JSON into template values keeping object key order:
// templates that print dicts (tojson) must emit keys in request order, as
// Python's dict does, and Go maps have none. It reads tokens with
// encoding/json/jsontext, which allocates far less per token than
// encoding/json's Decoder.Token; the options keep that decoder's leniency
// (duplicate keys, invalid UTF-8 turned into U+FFFD).
func jsonToValue(raw json.RawMessage) (jinja.Value, error) {
	return (*bigInts)(nil).decode(raw)
}

// decode is jsonToValue with integers beyond int64 kept exact through b
// (nil: they become floats, as the Jinja library reads them).
func (b *bigInts) decode(raw json.RawMessage) (jinja.Value, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	v, err := b.decodeValue(dec)
	if err != nil {
		return jinja.Undefined(), fmt.Errorf("decoding template input: %w: %w", ErrMalformed, err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return jinja.Undefined(), fmt.Errorf("decoding template input: trailing data: %w", ErrMalformed)
	}
	return v, nil
}

func (b *bigInts) decodeValue(dec *jsontext.Decoder) (jinja.Value, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return jinja.Undefined(), err
	}
	switch tok.Kind() {
	case '[':
		return b.decodeList(dec)
	case '{':
		return b.decodeDict(dec)
	case 'n':
		return jinja.None(), nil
	case 't', 'f':
		return jinja.NewBool(tok.Bool()), nil
	case '"':
		return jinja.NewString(tok.String()), nil
	case '0':
		// The raw number text, as json.Number: integers stay integers.
		return b.number(tok.String()), nil
	}
	return jinja.Undefined(), fmt.Errorf("unexpected %v", tok.Kind())
}

func (b *bigInts) decodeList(dec *jsontext.Decoder) (jinja.Value, error) {
	items := []jinja.Value{}
	for dec.PeekKind() != ']' {
		v, err := b.decodeValue(dec)
		if err != nil {
			return jinja.Undefined(), err
		}
		items = append(items, v)
	}
	if _, err := dec.ReadToken(); err != nil {
		return jinja.Undefined(), err
	}
	return jinja.NewList(items), nil
}

func (b *bigInts) decodeDict(dec *jsontext.Decoder) (jinja.Value, error) {
	d := jinja.NewDict()
	for dec.PeekKind() != '}' {
		k, err := dec.ReadToken()
		if err != nil {
			return jinja.Undefined(), err
		}
		// A token is only valid until the next read.
		key := k.String()
		v, err := b.decodeValue(dec)
		if err != nil {
			return jinja.Undefined(), err
		}
		d.AsDict().Set(key, v)
	}
	if _, err := dec.ReadToken(); err != nil {
		return jinja.Undefined(), err
	}
	return d, nil
}
