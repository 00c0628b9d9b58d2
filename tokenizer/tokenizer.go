package tokenizer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"unicode/utf8"
)

// Tokenizer encodes text to token ids exactly as the Hugging Face
// tokenizers library does for the same tokenizer.json.
//
// A Tokenizer is immutable after loading and safe for concurrent use. The
// zero value is not usable; construct one with Load or LoadDir.
type Tokenizer struct {
	raw   *addedMatcher // added tokens matched on the original text
	normd *addedMatcher // added tokens matched on normalized text
	norm  normalizer
	pre   preTokenizer
	// isolated is set when the whole pre-tokenizer is one Isolated split
	// (Llama 3, Qwen 3, GPT-OSS): its words are then encoded as the finder
	// yields them, with no span lists in between (encodeIsolated).
	isolated finder
	model    *bpe
	post     specials
	dec      []decodeStep
	decErr   error
	names    []string
	added    map[uint32]addedToken
	// addedIDs is each added token's id by content (the lowest id when two
	// share one), for renders that name special tokens (Harmony).
	addedIDs map[string]uint32
	config   Config
	states   sync.Pool
}

// encodeState holds the buffers one Encode call needs.
type encodeState struct {
	segs, nsegs []segment
	spans       []span
	words       []span
	pre         preScratch
	scratch     bpeScratch
	cuts        []int // PrefixCache: safe boundaries of the text
}

type fileJSON struct {
	AddedTokens   []addedToken    `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Decoder       json.RawMessage `json:"decoder"`
	Model         json.RawMessage `json:"model"`
}

// LoadDir loads tokenizer.json and, when present, tokenizer_config.json and
// the chat-template files (chat_template.jinja, additional_chat_templates/,
// chat_template.json) from dir: the same files the model server loads.
func LoadDir(dir string) (*Tokenizer, error) {
	data, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		return nil, fmt.Errorf("reading tokenizer.json: %w", err)
	}
	t, err := Load(data)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", dir, err)
	}
	cfg, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json"))
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("reading tokenizer_config.json: %w", err)
	}
	if err == nil {
		if t.config, err = parseConfig(cfg); err != nil {
			return nil, fmt.Errorf("loading %s: %w", dir, err)
		}
	}
	if err := loadTemplateFiles(dir, &t.config); err != nil {
		return nil, fmt.Errorf("loading %s: %w", dir, err)
	}
	return t, nil
}

// Load builds a Tokenizer from the contents of a tokenizer.json file. It
// fails with ErrUnsupported for any component it cannot reproduce exactly.
func Load(tokenizerJSON []byte) (*Tokenizer, error) {
	var f fileJSON
	if err := json.Unmarshal(tokenizerJSON, &f); err != nil {
		return nil, fmt.Errorf("decoding tokenizer.json: %w: %w", ErrMalformed, err)
	}
	t := &Tokenizer{added: map[uint32]addedToken{}}
	var err error
	if t.norm, err = buildNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	pre, byteLevel, err := buildPreTokenizer(f.PreTokenizer)
	if err != nil {
		return nil, err
	}
	t.pre, t.isolated = pre, isolatedFinder(pre)
	if t.model, t.names, err = buildBPE(f.Model, byteLevel); err != nil {
		return nil, err
	}
	if t.post, err = buildPostProcessor(f.PostProcessor); err != nil {
		return nil, err
	}
	t.dec, t.decErr = buildDecoder(f.Decoder)
	t.setAdded(f.AddedTokens)
	t.states.New = func() any { return &encodeState{} }
	return t, nil
}

// setAdded builds the two added-token matchers. Tokens flagged normalized
// are matched against normalized text, so their content is normalized too.
func (t *Tokenizer) setAdded(tokens []addedToken) {
	var raw, normd []addedToken
	t.addedIDs = make(map[string]uint32, len(tokens))
	for _, a := range tokens {
		t.added[a.ID] = a
		if id, ok := t.addedIDs[a.Content]; !ok || a.ID < id {
			t.addedIDs[a.Content] = a.ID
		}
		if a.Normalized {
			if t.norm != nil {
				a.Content = t.norm.normalize(a.Content)
			}
			normd = append(normd, a)
		} else {
			raw = append(raw, a)
		}
	}
	t.raw, t.normd = newAddedMatcher(raw), newAddedMatcher(normd)
}

// Config returns the settings read from tokenizer_config.json and the
// chat-template files.
func (t *Tokenizer) Config() Config { return t.config }

// VocabSize is the number of ids, including added tokens.
func (t *Tokenizer) VocabSize() int {
	n := len(t.names)
	for id := range t.added {
		n = max(n, int(id)+1)
	}
	return n
}

// Encode returns the ids of text. addSpecial applies the post-processor's
// special tokens (BOS/EOS), as add_special_tokens does in the reference.
// Added and special tokens written in the text are always recognised.
func (t *Tokenizer) Encode(text string, addSpecial bool) ([]uint32, error) {
	return t.AppendEncode(nil, text, addSpecial)
}

// AppendEncode is Encode appending to dst, to let callers reuse buffers.
func (t *Tokenizer) AppendEncode(dst []uint32, text string, addSpecial bool) ([]uint32, error) {
	if !utf8.ValidString(text) {
		return dst, fmt.Errorf("encoding text: %w", ErrInvalidUTF8)
	}
	if addSpecial {
		dst = append(dst, t.post.prefix...)
	}
	st := t.states.Get().(*encodeState)
	st.scratch.longBytes = 0
	defer t.states.Put(st)
	var err error
	st.segs = t.raw.split(text, st.segs[:0])
	for _, sg := range st.segs {
		if sg.isToken {
			dst = append(dst, sg.id)
			continue
		}
		if dst, err = t.encodeText(dst, text[sg.start:sg.end], st); err != nil {
			return dst, err
		}
	}
	if addSpecial {
		dst = append(dst, t.post.suffix...)
	}
	return dst, nil
}

// encodeText normalizes one stretch of text between added tokens, then
// looks for normalized added tokens inside it.
func (t *Tokenizer) encodeText(dst []uint32, s string, st *encodeState) ([]uint32, error) {
	if t.norm != nil {
		s = t.norm.normalize(s)
	}
	st.nsegs = t.normd.split(s, st.nsegs[:0])
	var err error
	for _, sg := range st.nsegs {
		if sg.isToken {
			dst = append(dst, sg.id)
			continue
		}
		if dst, err = t.encodePiece(dst, s[sg.start:sg.end], st); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// encodePiece pre-tokenizes normalized text and runs the model per word.
func (t *Tokenizer) encodePiece(dst []uint32, s string, st *encodeState) ([]uint32, error) {
	if t.isolated != nil {
		return t.encodeIsolated(dst, s, t.isolated, &st.scratch)
	}
	return t.encodeSpans(dst, s, st)
}

// encodeSpans is the general path: the pre-tokenizer's spans first, then
// the model per span.
func (t *Tokenizer) encodeSpans(dst []uint32, s string, st *encodeState) ([]uint32, error) {
	st.spans = append(st.spans[:0], span{0, len(s)})
	words := st.spans
	if t.pre != nil {
		st.words = t.pre.split(s, st.spans, st.words[:0], &st.pre)
		words = st.words
	}
	var err error
	for _, sp := range words {
		if sp.end <= sp.start {
			continue
		}
		if dst, err = t.model.appendWord(dst, s[sp.start:sp.end], &st.scratch); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// encodeIsolated is encodeSpans for a pre-tokenizer that is a single
// Isolated split: every delimiter match and every stretch between two is a
// word, in order, which is what splitter.pieces then apply produce. It
// skips writing and re-reading two span lists (and the Sequence's copy of
// them), about a tenth of encoding prose; FuzzIsolatedMatchesSpans checks
// it against encodeSpans.
func (t *Tokenizer) encodeIsolated(dst []uint32, s string, f finder, sc *bpeScratch) ([]uint32, error) {
	var err error
	last := 0
	for last < len(s) {
		a, b := f.find(s, last)
		if a < 0 {
			break
		}
		if a > last {
			if dst, err = t.model.appendWord(dst, s[last:a], sc); err != nil {
				return dst, err
			}
		}
		if b > a {
			if dst, err = t.model.appendWord(dst, s[a:b], sc); err != nil {
				return dst, err
			}
		}
		last = b
	}
	if last < len(s) {
		dst, err = t.model.appendWord(dst, s[last:], sc)
	}
	return dst, err
}

// isolatedFinder returns the finder of a pre-tokenizer that is one Split
// with the Isolated behavior (alone or as a Sequence's only step), else
// nil. Inversion does not matter there: Isolated keeps matches and the
// stretches between them alike.
func isolatedFinder(p preTokenizer) finder {
	if q, ok := p.(preSequence); ok && len(q) == 1 {
		p = q[0]
	}
	if sp, ok := p.(*splitter); ok && sp.behavior == behaviorIsolated {
		return sp.f
	}
	return nil
}
