package scorer

import (
	"errors"
	"strconv"

	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/tokenizer"
)

// appendReason appends to b the explanation of a decision, compact for the
// decision header, e.g. "basis=confirmed; matched=12c+3s/20;
// endpoint=10.0.0.2:8000; score=0.81; because=longest prefix". Load-only
// decisions say why prefixes were not used.
func appendReason(b []byte, f *field, best int, score float64, ties, herded int, note string) []byte {
	if f.blocks == 0 && note != "" {
		b = append(b, "basis=load; "...)
		b = append(b, note...)
	} else {
		m := matchAt(f, best)
		b = append(b, "basis="...)
		b = append(b, basisOf(m).String()...)
		b = append(b, "; matched="...)
		b = strconv.AppendInt(b, int64(m.Confirmed), 10)
		b = append(b, "c+"...)
		b = strconv.AppendInt(b, int64(m.Speculative), 10)
		b = append(b, "s/"...)
		b = strconv.AppendInt(b, int64(f.blocks), 10)
	}
	b = append(b, "; endpoint="...)
	b = append(b, f.endpoints[best]...)
	b = append(b, "; score="...)
	b = strconv.AppendFloat(b, score, 'f', 2, 64)
	b = append(b, "; inflight="...)
	b = strconv.AppendInt(b, f.loads[best].inflight, 10)
	b = append(b, "; candidates="...)
	b = strconv.AppendInt(b, int64(len(f.endpoints)), 10)
	b = append(b, "; because="...)
	return appendBecause(b, f, best, ties, herded)
}

func matchAt(f *field, i int) (m index.Match) {
	if f.blocks > 0 {
		m = f.matches[i]
	}
	return m
}

// appendBecause appends what decided among the candidates.
func appendBecause(b []byte, f *field, best, ties, herded int) []byte {
	longest := 0
	if f.blocks > 0 {
		for _, m := range f.matches {
			longest = max(longest, m.Blocks())
		}
	}
	chosen := matchAt(f, best).Blocks()
	switch {
	case longest > 0 && chosen == longest && ties > 1:
		return strconv.AppendInt(append(b, "longest prefix, random among "...), int64(ties), 10)
	case longest > 0 && chosen == longest:
		return append(b, "longest prefix"...)
	case longest > 0 && herded > 0:
		return append(b, "hot prefix spread"...)
	case longest > 0:
		return append(b, "load outweighs prefix"...)
	case ties > 1:
		return strconv.AppendInt(append(b, "least loaded, random among "...), int64(ties), 10)
	}
	return append(b, "least loaded"...)
}

// tokenizeReason classifies a tokenization failure into a bounded label.
func tokenizeReason(err error) string {
	switch {
	case errors.Is(err, ErrNoChatTemplate), errors.Is(err, tokenizer.ErrTemplate):
		return "template"
	case errors.Is(err, tokenizer.ErrRemote):
		return "remote"
	case errors.Is(err, ErrBadTokenID), errors.Is(err, ErrNoRawMessage), errors.Is(err, tokenizer.ErrRequest):
		return "request"
	case errors.Is(err, ErrPromptTooLong):
		return "too_long"
	}
	return "encode"
}
