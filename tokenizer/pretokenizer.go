package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
)

// span is a half-open byte range of the normalized text.
type span struct{ start, end int }

// preTokenizer refines a list of spans of s into smaller spans, appending
// them to out (which must not share memory with in). sc is the calling
// Encode's scratch space.
type preTokenizer interface {
	split(s string, in, out []span, sc *preScratch) []span
}

// preScratch holds buffers reused across Encode calls, so pre-tokenizing
// does not allocate per call. It is owned by one encodeState.
type preScratch struct {
	pieces []piece
	a, b   []span // a Sequence's intermediate results, used alternately
}

// splitBehavior says what happens to the matched delimiters.
type splitBehavior int

const (
	behaviorIsolated splitBehavior = iota
	behaviorRemoved
	behaviorMergedWithPrevious
	behaviorMergedWithNext
	behaviorContiguous
)

var behaviors = map[string]splitBehavior{
	"Isolated":           behaviorIsolated,
	"Removed":            behaviorRemoved,
	"MergedWithPrevious": behaviorMergedWithPrevious,
	"MergedWithNext":     behaviorMergedWithNext,
	"Contiguous":         behaviorContiguous,
}

// finder locates the leftmost delimiter at or after from.
type finder interface {
	find(s string, from int) (start, end int)
}

// literal finds a fixed string.
type literal string

func (l literal) find(s string, from int) (int, int) {
	i := strings.Index(s[from:], string(l))
	if i < 0 || l == "" {
		return -1, -1
	}
	return from + i, from + i + len(l)
}

// splitter is the Split pre-tokenizer (and ByteLevel with use_regex).
type splitter struct {
	f        finder
	behavior splitBehavior
	invert   bool
}

// piece is a span flagged as delimiter match or not.
type piece struct {
	span
	match bool
}

func (sp *splitter) split(s string, in, out []span, sc *preScratch) []span {
	for _, sn := range in {
		sc.pieces = sp.pieces(s, sn, sc.pieces[:0])
		out = sp.apply(sc.pieces, out)
	}
	return out
}

// pieces cuts one span into alternating delimiter and non-delimiter pieces.
func (sp *splitter) pieces(s string, sn span, ps []piece) []piece {
	sub := s[:sn.end]
	last := sn.start
	for last < sn.end {
		a, b := sp.f.find(sub, last)
		if a < 0 {
			break
		}
		if a > last {
			ps = append(ps, piece{span{last, a}, sp.invert})
		}
		ps = append(ps, piece{span{a, b}, !sp.invert})
		last = b
	}
	if last < sn.end {
		ps = append(ps, piece{span{last, sn.end}, sp.invert})
	}
	return ps
}

// apply turns pieces into output spans per the delimiter behavior.
func (sp *splitter) apply(ps []piece, out []span) []span {
	switch sp.behavior {
	case behaviorIsolated:
		for _, p := range ps {
			out = append(out, p.span)
		}
	case behaviorRemoved:
		for _, p := range ps {
			if !p.match {
				out = append(out, p.span)
			}
		}
	case behaviorMergedWithPrevious:
		out = mergeWithPrevious(ps, out)
	case behaviorMergedWithNext:
		out = mergeWithNext(ps, out)
	case behaviorContiguous:
		out = mergeContiguous(ps, out)
	}
	return out
}

func mergeWithPrevious(ps []piece, out []span) []span {
	base, prevMatch := len(out), false
	for _, p := range ps {
		if p.match && !prevMatch && len(out) > base {
			out[len(out)-1].end = p.end
		} else {
			out = append(out, p.span)
		}
		prevMatch = p.match
	}
	return out
}

func mergeWithNext(ps []piece, out []span) []span {
	for i := 0; i < len(ps); i++ {
		sn := ps[i].span
		// A delimiter joins the following non-delimiter piece.
		if ps[i].match && i+1 < len(ps) && !ps[i+1].match {
			sn.end = ps[i+1].end
			i++
		}
		out = append(out, sn)
	}
	return out
}

func mergeContiguous(ps []piece, out []span) []span {
	base := len(out)
	for i, p := range ps {
		if i > 0 && p.match && ps[i-1].match && len(out) > base {
			out[len(out)-1].end = p.end
			continue
		}
		out = append(out, p.span)
	}
	return out
}

// preSequence applies its steps in order. It never contains another
// preSequence (buildPreSequence flattens them), so its two scratch buffers
// are not reused by a step.
type preSequence []preTokenizer

func (q preSequence) split(s string, in, out []span, sc *preScratch) []span {
	cur := in
	for i, p := range q {
		buf := &sc.a
		if i%2 == 1 {
			buf = &sc.b
		}
		*buf = p.split(s, cur, (*buf)[:0], sc)
		cur = *buf
	}
	return append(out, cur...)
}

type preJSON struct {
	Type           string            `json:"type"`
	Pretokenizers  []json.RawMessage `json:"pretokenizers"`
	Pattern        patternJSON       `json:"pattern"`
	Behavior       string            `json:"behavior"`
	Invert         bool              `json:"invert"`
	AddPrefixSpace bool              `json:"add_prefix_space"`
	UseRegex       *bool             `json:"use_regex"`
}

// buildPreTokenizer decodes a pre-tokenizer and reports whether it contains
// a ByteLevel step (which makes the model byte-level).
func buildPreTokenizer(raw json.RawMessage) (preTokenizer, bool, error) {
	if isNull(raw) {
		return nil, false, nil
	}
	var j preJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, false, fmt.Errorf("decoding pre_tokenizer: %w: %w", ErrMalformed, err)
	}
	switch j.Type {
	case "Sequence":
		return buildPreSequence(j.Pretokenizers)
	case "Split":
		sp, err := buildSplit(j)
		return sp, false, err
	case "ByteLevel":
		return buildByteLevelPre(j)
	}
	return nil, false, fmt.Errorf("building pre_tokenizer %q: %w", j.Type, ErrUnsupported)
}

func buildPreSequence(items []json.RawMessage) (preTokenizer, bool, error) {
	var seq preSequence
	byteLevel := false
	for _, it := range items {
		p, bl, err := buildPreTokenizer(it)
		if err != nil {
			return nil, false, err
		}
		byteLevel = byteLevel || bl
		if inner, ok := p.(preSequence); ok {
			seq = append(seq, inner...)
		} else if p != nil {
			seq = append(seq, p)
		}
	}
	if len(seq) == 0 {
		return nil, byteLevel, nil
	}
	return seq, byteLevel, nil
}

func buildSplit(j preJSON) (preTokenizer, error) {
	b, ok := behaviors[j.Behavior]
	if !ok {
		return nil, fmt.Errorf("building Split behavior %q: %w", j.Behavior, ErrUnsupported)
	}
	sp := &splitter{behavior: b, invert: j.Invert}
	switch {
	case j.Pattern.String != nil:
		sp.f = literal(*j.Pattern.String)
	case j.Pattern.Regex != nil:
		sc, err := newScanner(*j.Pattern.Regex)
		if err != nil {
			return nil, err
		}
		sp.f = sc
	default:
		return nil, fmt.Errorf("building Split without a pattern: %w", ErrMalformed)
	}
	return sp, nil
}

// buildByteLevelPre handles ByteLevel: the byte mapping itself is folded into
// the vocabulary at load time, so only its optional regex split remains.
func buildByteLevelPre(j preJSON) (preTokenizer, bool, error) {
	if j.AddPrefixSpace {
		return nil, false, fmt.Errorf("building ByteLevel with add_prefix_space: %w", ErrUnsupported)
	}
	if j.UseRegex != nil && !*j.UseRegex {
		return nil, true, nil
	}
	sc, err := newScanner(patGPT2)
	if err != nil {
		return nil, false, err
	}
	return &splitter{f: sc, behavior: behaviorIsolated}, true, nil
}
