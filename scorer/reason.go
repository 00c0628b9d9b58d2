package scorer

import (
	"errors"
	"strconv"
	"strings"

	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/tokenizer"
)

// reason explains a decision compactly for the decision header, e.g.
// "basis=confirmed; matched=12c+3s/20; endpoint=10.0.0.2:8000; score=0.81;
// because=longest prefix". Load-only decisions say why prefixes were not used.
func reason(f *field, best int, score float64, ties, herded int, note string) string {
	var b strings.Builder
	ep := f.endpoints[best]
	if f.blocks == 0 && note != "" {
		b.WriteString("basis=load; ")
		b.WriteString(note)
	} else {
		m := matchAt(f, best)
		b.WriteString("basis=" + basisOf(m).String())
		b.WriteString("; matched=" + strconv.Itoa(m.Confirmed) + "c+" + strconv.Itoa(m.Speculative) + "s/" + strconv.Itoa(f.blocks))
	}
	b.WriteString("; endpoint=" + ep)
	b.WriteString("; score=" + strconv.FormatFloat(score, 'f', 2, 64))
	b.WriteString("; inflight=" + strconv.FormatInt(f.loads[best].inflight, 10))
	b.WriteString("; candidates=" + strconv.Itoa(len(f.endpoints)))
	b.WriteString("; because=" + because(f, best, ties, herded))
	return b.String()
}

func matchAt(f *field, i int) (m index.Match) {
	if f.blocks > 0 {
		m = f.matches[i]
	}
	return m
}

// because names what decided among the candidates.
func because(f *field, best, ties, herded int) string {
	longest := 0
	if f.blocks > 0 {
		for _, m := range f.matches {
			longest = max(longest, m.Blocks())
		}
	}
	chosen := matchAt(f, best).Blocks()
	switch {
	case longest > 0 && chosen == longest && ties > 1:
		return "longest prefix, random among " + strconv.Itoa(ties)
	case longest > 0 && chosen == longest:
		return "longest prefix"
	case longest > 0 && herded > 0:
		return "hot prefix spread"
	case longest > 0:
		return "load outweighs prefix"
	case ties > 1:
		return "least loaded, random among " + strconv.Itoa(ties)
	}
	return "least loaded"
}

// tokenizeReason classifies a tokenization failure into a bounded label.
func tokenizeReason(err error) string {
	switch {
	case errors.Is(err, ErrNoChatTemplate), errors.Is(err, tokenizer.ErrTemplate):
		return "template"
	case errors.Is(err, tokenizer.ErrRemote):
		return "remote"
	case errors.Is(err, ErrBadTokenID), errors.Is(err, ErrNoRawMessage):
		return "request"
	case errors.Is(err, ErrPromptTooLong):
		return "too_long"
	}
	return "encode"
}
