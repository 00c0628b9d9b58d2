package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// normalizer rewrites text before pre-tokenization. Only rewrites that keep
// exact parity with the reference are supported.
type normalizer interface {
	normalize(s string) string
}

type normForm struct{ f norm.Form }

func (n normForm) normalize(s string) string { return n.f.String(s) }

// prepend adds a prefix to every non-empty piece (SentencePiece's "▁").
type prepend struct{ prefix string }

func (p prepend) normalize(s string) string {
	if s == "" {
		return s
	}
	return p.prefix + s
}

// replace substitutes a literal string (a regex pattern is unsupported).
type replace struct{ from, to string }

func (r replace) normalize(s string) string { return strings.ReplaceAll(s, r.from, r.to) }

type normSequence []normalizer

func (q normSequence) normalize(s string) string {
	for _, n := range q {
		s = n.normalize(s)
	}
	return s
}

type normJSON struct {
	Type        string            `json:"type"`
	Normalizers []json.RawMessage `json:"normalizers"`
	Prepend     string            `json:"prepend"`
	Pattern     patternJSON       `json:"pattern"`
	Content     string            `json:"content"`
}

// patternJSON is {"String": "..."} or {"Regex": "..."}.
type patternJSON struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

// buildNormalizer decodes a normalizer; nil JSON means none.
func buildNormalizer(raw json.RawMessage) (normalizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	var j normJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, fmt.Errorf("decoding normalizer: %w: %w", ErrMalformed, err)
	}
	switch j.Type {
	case "NFC":
		return normForm{norm.NFC}, nil
	case "NFD":
		return normForm{norm.NFD}, nil
	case "NFKC":
		return normForm{norm.NFKC}, nil
	case "NFKD":
		return normForm{norm.NFKD}, nil
	case "Prepend":
		return prepend{j.Prepend}, nil
	case "Replace":
		if j.Pattern.String == nil {
			return nil, fmt.Errorf("building Replace normalizer with a regex: %w", ErrUnsupported)
		}
		return replace{*j.Pattern.String, j.Content}, nil
	case "Sequence":
		return buildNormSequence(j.Normalizers)
	}
	return nil, fmt.Errorf("building normalizer %q: %w", j.Type, ErrUnsupported)
}

func buildNormSequence(items []json.RawMessage) (normalizer, error) {
	var seq normSequence
	for _, it := range items {
		n, err := buildNormalizer(it)
		if err != nil {
			return nil, err
		}
		if n != nil {
			seq = append(seq, n)
		}
	}
	if len(seq) == 0 {
		return nil, nil
	}
	return seq, nil
}

func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}
