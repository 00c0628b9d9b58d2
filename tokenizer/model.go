package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

type modelJSON struct {
	Type                    string            `json:"type"`
	Dropout                 *float64          `json:"dropout"`
	UnkToken                *string           `json:"unk_token"`
	ContinuingSubwordPrefix *string           `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string           `json:"end_of_word_suffix"`
	FuseUnk                 bool              `json:"fuse_unk"`
	ByteFallback            bool              `json:"byte_fallback"`
	IgnoreMerges            bool              `json:"ignore_merges"`
	Vocab                   map[string]uint32 `json:"vocab"`
	Merges                  []json.RawMessage `json:"merges"`
}

// buildBPE decodes the model. The original vocabulary strings are returned
// too, for decoding.
func buildBPE(raw json.RawMessage, byteLevel bool) (*bpe, []string, error) {
	var j modelJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, nil, fmt.Errorf("decoding model: %w: %w", ErrMalformed, err)
	}
	if err := checkModel(&j); err != nil {
		return nil, nil, err
	}
	m := &bpe{byteLevel: byteLevel, byteFallback: j.ByteFallback, ignoreMerges: j.IgnoreMerges, fuseUnk: j.FuseUnk}
	if j.UnkToken != nil {
		id, ok := j.Vocab[*j.UnkToken]
		if !ok {
			return nil, nil, fmt.Errorf("finding unk_token %q in vocab: %w", *j.UnkToken, ErrMalformed)
		}
		m.unk, m.hasUnk = id, true
	}
	names := vocabNames(j.Vocab)
	m.vocab = encodingVocab(j.Vocab, byteLevel)
	if !byteLevel {
		m.split = newWordSplitter(m.vocab)
		m.runeIDs = runeTable(m.vocab)
	}
	m.fillByteTables(j.Vocab)
	merges, err := buildMerges(j.Merges, j.Vocab)
	if err != nil {
		return nil, nil, err
	}
	m.merges = merges
	m.cache = newWordCache()
	m.fillSingles()
	return m, names, nil
}

func checkModel(j *modelJSON) error {
	if j.Type != "BPE" && j.Type != "" {
		return fmt.Errorf("building model %q: %w", j.Type, ErrUnsupported)
	}
	if j.Dropout != nil && *j.Dropout != 0 {
		return fmt.Errorf("building BPE with dropout: %w", ErrUnsupported)
	}
	if j.ContinuingSubwordPrefix != nil && *j.ContinuingSubwordPrefix != "" {
		return fmt.Errorf("building BPE with continuing_subword_prefix: %w", ErrUnsupported)
	}
	if j.EndOfWordSuffix != nil && *j.EndOfWordSuffix != "" {
		return fmt.Errorf("building BPE with end_of_word_suffix: %w", ErrUnsupported)
	}
	return nil
}

func vocabNames(v map[string]uint32) []string {
	maxID := uint32(0)
	for _, id := range v {
		maxID = max(maxID, id)
	}
	names := make([]string, maxID+1)
	for s, id := range v {
		names[id] = s
	}
	return names
}

// encodingVocab keys the vocabulary by what encoding looks up: raw bytes for
// byte-level models, the strings themselves otherwise.
func encodingVocab(v map[string]uint32, byteLevel bool) map[string]uint32 {
	if !byteLevel {
		return v
	}
	out := make(map[string]uint32, len(v))
	for s, id := range v {
		if raw, ok := unmapByteLevel(s); ok {
			out[raw] = id
		}
	}
	return out
}

// runeTable maps each rune of the Basic Multilingual Plane to its
// one-character token id, or noToken.
func runeTable(v map[string]uint32) []uint32 {
	t := make([]uint32, 0x10000)
	for r := range t {
		t[r] = noToken
	}
	for s, id := range v {
		if r, n := utf8.DecodeRuneInString(s); n == len(s) && int(r) < len(t) && (r != utf8.RuneError || n > 1) {
			t[r] = id
		}
	}
	return t
}

func (m *bpe) fillByteTables(v map[string]uint32) {
	for b := 0; b < 256; b++ {
		m.fallback[b] = noToken
		if id, ok := v[fmt.Sprintf("<0x%02X>", b)]; ok {
			m.fallback[b] = id
		}
		if id, ok := v[string(byteToRune[b])]; ok && m.byteLevel {
			m.byteIDs[b], m.byteOK[b] = id, true
		}
	}
}

// buildMerges decodes merges given as "a b" strings or ["a", "b"] pairs;
// rank is the position in the list.
func buildMerges(raw []json.RawMessage, vocab map[string]uint32) (mergeTable, error) {
	out := newMergeTable(len(raw))
	for rank, r := range raw {
		a, b, err := decodeMerge(r)
		if err != nil {
			return mergeTable{}, err
		}
		ia, oka := vocab[a]
		ib, okb := vocab[b]
		im, okm := vocab[a+b]
		if !oka || !okb || !okm {
			return mergeTable{}, fmt.Errorf("resolving merge %q %q: %w", a, b, ErrMalformed)
		}
		// A repeated pair keeps its last rank, as the reference's map
		// construction does.
		out.put(pairKey(ia, ib), uint64(rank)<<32|uint64(im))
	}
	return out, nil
}

func decodeMerge(r json.RawMessage) (string, string, error) {
	if len(r) > 0 && r[0] == '"' {
		var s string
		if err := json.Unmarshal(r, &s); err != nil {
			return "", "", fmt.Errorf("decoding merge: %w: %w", ErrMalformed, err)
		}
		a, b, ok := strings.Cut(s, " ")
		if !ok {
			return "", "", fmt.Errorf("decoding merge %q: %w", s, ErrMalformed)
		}
		return a, b, nil
	}
	var p []string
	if err := json.Unmarshal(r, &p); err != nil || len(p) != 2 {
		return "", "", fmt.Errorf("decoding merge %s: %w", r, ErrMalformed)
	}
	return p[0], p[1], nil
}
