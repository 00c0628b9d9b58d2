package gapsweep

import (
	"crypto/rand"
	"encoding/hex"
	mrand "math/rand/v2"
	"strings"
)

// vocabulary holds common lower-case English words, each one token (with
// its leading space) in the usual BPE vocabularies, so a prompt's length in
// words is close to its length in tokens.
var vocabulary = strings.Fields(`the of and to in is that for it as was with be by on not he this are or
his from at which but have an they you were her she there been one all we their has would when if
so no will more time about can than them some could only new other then first any like very after
most made also did many before must through back years where much your way well down should because
long each just state people those how too little good world make still own see men work last`)

// Prompts builds pair prompts. It is not safe for concurrent use; the zero
// value is not usable, make it with NewPrompts.
type Prompts struct {
	prefixWords, suffixWords int
	rng                      *mrand.Rand
}

// NewPrompts returns a builder of prefixWords-word shared prefixes and
// suffixWords-word suffixes; seed 0 picks a random seed.
func NewPrompts(prefixWords, suffixWords int, seed int64) *Prompts {
	s := uint64(seed)
	if seed == 0 {
		s = mrand.Uint64()
	}
	return &Prompts{prefixWords: prefixWords, suffixWords: suffixWords, rng: mrand.New(mrand.NewPCG(s, s^0x9e3779b97f4a7c15))}
}

// Pair returns two prompts sharing an exact prefix that opens with a fresh
// random nonce, so no earlier pair's blocks can match it, and ending in
// different suffixes.
func (p *Prompts) Pair() (first, second string) {
	var b strings.Builder
	b.WriteString("Session " + nonce() + ".")
	p.words(&b, p.prefixWords)
	prefix := b.String()
	return prefix + p.suffix("first"), prefix + p.suffix("second")
}

func (p *Prompts) suffix(tag string) string {
	var b strings.Builder
	b.WriteString("\nQuestion " + tag + ":")
	p.words(&b, p.suffixWords)
	return b.String()
}

func (p *Prompts) words(b *strings.Builder, n int) {
	for range n {
		b.WriteByte(' ')
		b.WriteString(vocabulary[p.rng.IntN(len(vocabulary))])
	}
}

// nonce is random even when the word seed is fixed: a rerun must not hit
// the previous run's cache.
func nonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}
