package tokenizer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// refBPE is the straightforward BPE that the fast paths (flat merge table,
// word cache, word splitting, rune table, heap merge) must agree with: Go
// maps read from tokenizer.json apart from the loader, symbols looked up
// by string, and the textbook loop that merges the lowest-ranked adjacent
// pair, leftmost among equals, until none merges.
type refBPE struct {
	vocab        map[string]uint32 // as in tokenizer.json (byte-level strings mapped)
	ranks        map[[2]uint32]refMerge
	byteLevel    bool
	ignoreMerges bool
	byteFallback bool
	fuseUnk      bool
	unk          *string
}

type refMerge struct{ rank, id uint32 }

var refModels sync.Map // family -> *refBPE

func loadRefBPE(t testing.TB, family string) *refBPE {
	t.Helper()
	if r, ok := refModels.Load(family); ok {
		return r.(*refBPE)
	}
	data, err := os.ReadFile(filepath.Join(familyDir(t, family), "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f fileJSON
	var j modelJSON
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(f.Model, &j); err != nil {
		t.Fatal(err)
	}
	r := &refBPE{vocab: j.Vocab, ranks: map[[2]uint32]refMerge{}, ignoreMerges: j.IgnoreMerges,
		byteFallback: j.ByteFallback, fuseUnk: j.FuseUnk, unk: j.UnkToken}
	r.byteLevel = loadFamily(t, family).model.byteLevel
	for rank, raw := range j.Merges {
		a, b, err := decodeMerge(raw)
		if err != nil {
			t.Fatal(err)
		}
		r.ranks[[2]uint32{j.Vocab[a], j.Vocab[b]}] = refMerge{uint32(rank), j.Vocab[a+b]}
	}
	refModels.Store(family, r)
	return r
}

// mapped is word as the vocabulary spells it.
func (r *refBPE) mapped(word string) string {
	if !r.byteLevel {
		return word
	}
	var sb strings.Builder
	for i := 0; i < len(word); i++ {
		sb.WriteRune(byteToRune[word[i]])
	}
	return sb.String()
}

func (r *refBPE) encode(word string) ([]uint32, error) {
	if id, ok := r.vocab[r.mapped(word)]; ok && r.ignoreMerges {
		return []uint32{id}, nil
	}
	syms, err := r.symbols(word)
	if err != nil {
		return nil, err
	}
	for {
		best, bm := -1, refMerge{}
		for i := 0; i+1 < len(syms); i++ {
			if m, ok := r.ranks[[2]uint32{syms[i], syms[i+1]}]; ok && (best < 0 || m.rank < bm.rank) {
				best, bm = i, m
			}
		}
		if best < 0 {
			return syms, nil
		}
		syms[best] = bm.id
		syms = slices.Delete(syms, best+1, best+2)
	}
}

func (r *refBPE) symbols(word string) ([]uint32, error) {
	var syms []uint32
	if r.byteLevel {
		for i := 0; i < len(word); i++ {
			id, ok := r.vocab[r.mapped(word[i:i+1])]
			if !ok {
				return nil, ErrUnknownToken
			}
			syms = append(syms, id)
		}
		return syms, nil
	}
	pendingUnk := false
	for _, ch := range word {
		s := string(ch)
		if id, ok := r.vocab[s]; ok {
			if pendingUnk {
				syms, pendingUnk = append(syms, r.vocab[*r.unk]), false
			}
			syms = append(syms, id)
			continue
		}
		if fb, ok := r.fallback(s); ok {
			syms = append(syms, fb...)
			continue
		}
		if r.unk == nil {
			return nil, ErrUnknownToken
		}
		if pendingUnk && !r.fuseUnk {
			syms = append(syms, r.vocab[*r.unk])
		}
		pendingUnk = true
	}
	if pendingUnk {
		syms = append(syms, r.vocab[*r.unk])
	}
	return syms, nil
}

func (r *refBPE) fallback(ch string) ([]uint32, bool) {
	if !r.byteFallback {
		return nil, false
	}
	var ids []uint32
	for i := 0; i < len(ch); i++ {
		id, ok := r.vocab[fmt.Sprintf("<0x%02X>", ch[i])]
		if !ok {
			return nil, false
		}
		ids = append(ids, id)
	}
	return ids, true
}

// preTokenized returns the words the model sees for text, added tokens
// aside.
func preTokenized(tk *Tokenizer, text string) []string {
	if tk.norm != nil {
		text = tk.norm.normalize(text)
	}
	spans := []span{{0, len(text)}}
	if tk.pre != nil {
		spans = tk.pre.split(text, spans, nil, &preScratch{})
	}
	var words []string
	for _, sp := range spans {
		if sp.end > sp.start {
			words = append(words, text[sp.start:sp.end])
		}
	}
	return words
}

// refMaxWord bounds the words checked against the quadratic reference;
// longer ones (whole Gemma 3 paragraphs) are compared with the unsplit
// model by TestSplitMatchesWholeWord instead.
const refMaxWord = 1024

// checkModelAgrees encodes each word of text with the production model
// twice (a cache miss, then a hit) and with the reference.
func checkModelAgrees(t *testing.T, fam string, tk *Tokenizer, ref *refBPE, text string) {
	t.Helper()
	var sc bpeScratch
	for _, w := range preTokenized(tk, text) {
		if len(w) > refMaxWord {
			continue
		}
		want, werr := ref.encode(w)
		for pass := range 2 {
			got, gerr := tk.model.appendWord([]uint32{7}, w, &sc)
			if (werr == nil) != (gerr == nil) || (werr == nil && !slices.Equal(got[1:], want)) {
				t.Fatalf("%s: word %q pass %d: got %v (%v), reference %v (%v)", fam, w, pass, got, gerr, want, werr)
			}
		}
	}
}

func TestModelMatchesReference(t *testing.T) {
	g := loadGolden(t)
	for _, fam := range families {
		t.Run(fam, func(t *testing.T) {
			tk, ref := loadFamily(t, fam), loadRefBPE(t, fam)
			for _, s := range g.Texts {
				checkModelAgrees(t, fam, tk, ref, s)
			}
		})
	}
}

// FuzzModelMatchesReference checks every fast path of the model against
// the straightforward reference on arbitrary text, word by word.
func FuzzModelMatchesReference(f *testing.F) {
	fuzzSeeds(f)
	for _, s := range []string{"a>▁</b", strings.Repeat("ab", 200), "\u017f's 東京 naïve"} {
		f.Add(s)
	}
	type pair struct {
		tk  *Tokenizer
		ref *refBPE
	}
	var models []pair
	for _, fam := range families {
		models = append(models, pair{loadFamily(f, fam), loadRefBPE(f, fam)})
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		for i, m := range models {
			checkModelAgrees(t, families[i], m.tk, m.ref, s)
		}
	})
}

// TestEncodeConcurrentMatchesGolden encodes the golden texts from several
// goroutines at once, so the shared word cache fills while it is read.
func TestEncodeConcurrentMatchesGolden(t *testing.T) {
	g := loadGolden(t)
	for _, fam := range []string{"qwen3", "gemma3"} {
		tk := loadFamily(t, fam)
		want := g.Families[fam].Plain
		var wg sync.WaitGroup
		errs := make(chan string, 4)
		for w := range 4 {
			wg.Go(func() {
				for k := range g.Texts {
					i := (k*7 + w*13) % len(g.Texts)
					got, err := tk.Encode(g.Texts[i], false)
					if err != nil || !slices.Equal(got, want[i]) {
						errs <- fmt.Sprintf("%s: text %d differs (%v)", fam, i, err)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	}
}
