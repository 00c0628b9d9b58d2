package sim

// outputWords is the vocabulary of generated text. Its content does not
// matter; that it is fixed does, because output must be a pure function of
// the request.
var outputWords = [...]string{
	"the", "cache", "block", "prefix", "token", "router", "warm", "cold",
	"request", "model", "server", "event", "stream", "batch", "queue", "decode",
	"prefill", "latency", "route", "index", "hash", "chain", "pool", "pod",
	"envoy", "replica", "expiry", "window", "signal", "store", "remove", "clear",
	"a", "of", "and", "to", "in", "is", "for", "on",
	"with", "as", "at", "by", "from", "that", "this", "it",
	"fast", "slow", "hit", "miss", "near", "far", "soon", "late",
	"one", "two", "three", "four", "many", "few", "all", "none",
}

// generator produces a deterministic token sequence seeded by the request.
// It is a splitmix64 stream: tiny, allocation-free and good enough to make
// different prompts yield visibly different text.
type generator struct{ state uint64 }

// newGenerator seeds a generator with FNV-1a over the model name and the
// prompt's token ids, so equal requests generate equal text on every run and
// every simulator instance.
func newGenerator(model string, prompt []int) generator {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	for i := 0; i < len(model); i++ {
		h = (h ^ uint64(model[i])) * prime
	}
	for _, id := range prompt {
		for shift := 0; shift < 32; shift += 8 {
			h = (h ^ uint64(uint32(id)>>shift&0xff)) * prime
		}
	}
	return generator{state: h}
}

func (g *generator) next() Token {
	g.state += 0x9e3779b97f4a7c15
	z := g.state
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	return outputTokens[z%uint64(len(outputTokens))]
}

// outputTokens holds the generated tokens, built once so decoding a token
// allocates nothing. The leading space makes each word one stand-in token.
var outputTokens = func() (toks [len(outputWords)]Token) {
	for i, w := range outputWords {
		toks[i] = Token{ID: pieceID(" " + w), Text: " " + w}
	}
	return toks
}()
