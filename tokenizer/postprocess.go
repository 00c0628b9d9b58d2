package tokenizer

import (
	"encoding/json"
	"fmt"
)

// specials are the ids a post-processor adds around a single sequence when
// add_special_tokens is set.
type specials struct {
	prefix, suffix []uint32
}

type postJSON struct {
	Type          string            `json:"type"`
	Processors    []json.RawMessage `json:"processors"`
	Single        []templateItem    `json:"single"`
	SpecialTokens map[string]struct {
		IDs []uint32 `json:"ids"`
	} `json:"special_tokens"`
}

type templateItem struct {
	SpecialToken *struct {
		ID string `json:"id"`
	} `json:"SpecialToken"`
	Sequence *struct {
		ID string `json:"id"`
	} `json:"Sequence"`
}

// buildPostProcessor decodes the post-processor into the ids it adds.
func buildPostProcessor(raw json.RawMessage) (specials, error) {
	if isNull(raw) {
		return specials{}, nil
	}
	var j postJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return specials{}, fmt.Errorf("decoding post_processor: %w: %w", ErrMalformed, err)
	}
	switch j.Type {
	case "ByteLevel":
		return specials{}, nil // only adjusts offsets
	case "TemplateProcessing":
		return buildTemplate(j)
	case "Sequence":
		var out specials
		for _, p := range j.Processors {
			s, err := buildPostProcessor(p)
			if err != nil {
				return specials{}, err
			}
			out.prefix = append(s.prefix, out.prefix...)
			out.suffix = append(out.suffix, s.suffix...)
		}
		return out, nil
	}
	return specials{}, fmt.Errorf("building post_processor %q: %w", j.Type, ErrUnsupported)
}

func buildTemplate(j postJSON) (specials, error) {
	var out specials
	seen := false
	for _, it := range j.Single {
		switch {
		case it.Sequence != nil:
			if seen {
				return specials{}, fmt.Errorf("building template with two sequences: %w", ErrMalformed)
			}
			seen = true
		case it.SpecialToken != nil:
			st, ok := j.SpecialTokens[it.SpecialToken.ID]
			if !ok {
				return specials{}, fmt.Errorf("resolving template token %q: %w", it.SpecialToken.ID, ErrMalformed)
			}
			if seen {
				out.suffix = append(out.suffix, st.IDs...)
			} else {
				out.prefix = append(out.prefix, st.IDs...)
			}
		}
	}
	if !seen {
		return specials{}, fmt.Errorf("building template without a sequence: %w", ErrMalformed)
	}
	return out, nil
}
