package tokenizer

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/ardanlabs/jinja"
)

// bigInts keeps integers beyond int64 exact through a render. Python reads
// JSON integers at any size and a template prints them digit for digit (a
// tool schema's "maximum": 2**70, say); the Jinja library has 64-bit
// integers only and would print a float. Each such integer therefore enters
// the template as a stand-in int64 that appears nowhere in the request, and
// the rendered text gets the original digits back in its place. A template
// that computes with the number (rather than printing it or comparing its
// sign) would differ; tool schemas and arguments are printed. Not safe for
// concurrent use; one per render.
type bigInts struct {
	inputs   [][]byte          // the request's raw JSON, to pick unused stand-ins
	standins map[string]string // stand-in digits -> original digits
	pos, neg int64             // stand-ins handed out so far
}

// Stand-ins count down from the int64 maximum and up from a million above
// the minimum, so positive and negative ones never share digits.
const bigIntNegativeBase = math.MinInt64 + 1_000_000

func newBigInts(inputs ...[]byte) *bigInts { return &bigInts{inputs: inputs} }

// number reads a JSON number the way Python does: integers stay integers at
// any size (through a stand-in when b is not nil), others are floats.
func (b *bigInts) number(s string) jinja.Value {
	if b == nil || strings.ContainsAny(s, ".eE") {
		return jinja.FromGoValue(json.Number(s))
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return jinja.NewInt(n)
	}
	return jinja.NewInt(b.standin(s))
}

func (b *bigInts) standin(digits string) int64 {
	if b.standins == nil {
		b.standins = map[string]string{}
	}
	for {
		var n int64
		if strings.HasPrefix(digits, "-") {
			n = bigIntNegativeBase + b.neg
			b.neg++
		} else {
			n = math.MaxInt64 - b.pos
			b.pos++
		}
		s := strconv.FormatInt(n, 10)
		if _, used := b.standins[s]; !used && !b.inInputs(s) {
			b.standins[s] = digits
			return n
		}
	}
}

func (b *bigInts) inInputs(s string) bool {
	for _, in := range b.inputs {
		if bytes.Contains(in, []byte(s)) {
			return true
		}
	}
	return false
}

// restore puts the original digits back into rendered text.
func (b *bigInts) restore(text string) string {
	for s, digits := range b.standins {
		text = strings.ReplaceAll(text, s, digits)
	}
	return text
}
