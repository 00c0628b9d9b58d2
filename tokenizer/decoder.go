package tokenizer

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// decodeStep transforms the list of token strings, as the reference's
// decoders do; the final text is their concatenation.
type decodeStep func([]string) []string

type decJSON struct {
	Type     string            `json:"type"`
	Decoders []json.RawMessage `json:"decoders"`
	Pattern  patternJSON       `json:"pattern"`
	Content  string            `json:"content"`
	Start    int               `json:"start"`
	Stop     int               `json:"stop"`
}

// buildDecoder decodes the decoder chain; a nil chain concatenates tokens.
func buildDecoder(raw json.RawMessage) ([]decodeStep, error) {
	if isNull(raw) {
		return nil, nil
	}
	var j decJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, fmt.Errorf("decoding decoder: %w: %w", ErrMalformed, err)
	}
	switch j.Type {
	case "Sequence":
		var steps []decodeStep
		for _, d := range j.Decoders {
			s, err := buildDecoder(d)
			if err != nil {
				return nil, err
			}
			steps = append(steps, s...)
		}
		return steps, nil
	case "ByteLevel":
		return []decodeStep{decodeByteLevel}, nil
	case "ByteFallback":
		return []decodeStep{decodeByteFallback}, nil
	case "Fuse":
		return []decodeStep{func(t []string) []string { return []string{strings.Join(t, "")} }}, nil
	case "Replace":
		if j.Pattern.String == nil {
			return nil, fmt.Errorf("building Replace decoder with a regex: %w", ErrUnsupported)
		}
		from, to := *j.Pattern.String, j.Content
		return []decodeStep{func(t []string) []string {
			return mapTokens(t, func(s string) string { return strings.ReplaceAll(s, from, to) })
		}}, nil
	case "Strip":
		return []decodeStep{stripStep(j.Content, j.Start, j.Stop)}, nil
	}
	return nil, fmt.Errorf("building decoder %q: %w", j.Type, ErrUnsupported)
}

func mapTokens(t []string, f func(string) string) []string {
	for i := range t {
		t[i] = f(t[i])
	}
	return t
}

func decodeByteLevel(toks []string) []string {
	var buf []byte
	for _, t := range toks {
		if raw, ok := unmapByteLevel(t); ok {
			buf = append(buf, raw...)
		} else {
			buf = append(buf, t...)
		}
	}
	return []string{strings.ToValidUTF8(string(buf), "\uFFFD")}
}

// decodeByteFallback joins runs of <0xXX> tokens into text; a run that is
// not valid UTF-8 becomes one U+FFFD per byte, as in the reference.
func decodeByteFallback(toks []string) []string {
	var out []string
	var pending []byte
	flush := func() {
		if len(pending) == 0 {
			return
		}
		if utf8.Valid(pending) {
			out = append(out, string(pending))
		} else {
			out = append(out, strings.Repeat("\uFFFD", len(pending)))
		}
		pending = pending[:0]
	}
	for _, t := range toks {
		if len(t) == 6 && strings.HasPrefix(t, "<0x") && t[5] == '>' {
			if b, err := strconv.ParseUint(t[3:5], 16, 8); err == nil {
				pending = append(pending, byte(b))
				continue
			}
		}
		flush()
		out = append(out, t)
	}
	flush()
	return out
}

func stripStep(content string, start, stop int) decodeStep {
	return func(t []string) []string {
		return mapTokens(t, func(s string) string {
			for k := 0; k < start && strings.HasPrefix(s, content); k++ {
				s = s[len(content):]
			}
			for k := 0; k < stop && strings.HasSuffix(s, content); k++ {
				s = s[:len(s)-len(content)]
			}
			return s
		})
	}
}
