package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/warmroute/warmroute/openai"
)

const (
	textChunk  = `data: {"choices":[{"text":"hi"}]}` + "\n\n"
	usageChunk = `data: {"choices":[],"usage":{"prompt_tokens":40,"prompt_tokens_details":{"cached_tokens":32}}}` + "\n\n"
	doneChunk  = "data: [DONE]\n\n"
)

var streamTests = []struct {
	name       string
	body       string
	wantErr    error
	wantPrompt int
	wantCached int
}{
	{name: "complete", body: textChunk + textChunk + usageChunk + doneChunk, wantPrompt: 40, wantCached: 32},
	{name: "comments and blank lines ignored", body: ": ping\n\n" + textChunk + usageChunk + doneChunk, wantPrompt: 40, wantCached: 32},
	{name: "usage without details", body: textChunk + `data: {"choices":[],"usage":{"prompt_tokens":9}}` + "\n\n" + doneChunk, wantPrompt: 9},
	{name: "cut before done", body: textChunk + usageChunk, wantErr: errStreamCut},
	{name: "no usage", body: textChunk + doneChunk, wantErr: errNoUsage},
	{name: "no text", body: usageChunk + doneChunk, wantErr: errNoTokens},
	{name: "empty", body: "", wantErr: errStreamCut},
	{name: "bad json", body: "data: {nope\n\n" + doneChunk, wantErr: errDecode},
	{name: "line too long", body: "data: " + strings.Repeat("x", openai.DefaultLimit+1) + "\n", wantErr: errDecode},
}

func TestReadStream(t *testing.T) {
	for _, tt := range streamTests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := readStream(strings.NewReader(tt.body), time.Now())
			switch {
			case tt.wantErr == errDecode:
				if err == nil {
					t.Fatal("readStream accepted a malformed stream")
				}
				return
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if o.Prompt != tt.wantPrompt || o.Cached != tt.wantCached || o.TTFT <= 0 {
				t.Errorf("got %+v, want prompt %d cached %d and a TTFT", o, tt.wantPrompt, tt.wantCached)
			}
		})
	}
}

// errDecode marks table rows that must fail, with whatever error.
var errDecode = errors.New("any decoding error")

func FuzzReadStream(f *testing.F) {
	for _, tt := range streamTests {
		f.Add(tt.body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		o, err := readStream(strings.NewReader(body), time.Now())
		if err == nil && o.TTFT <= 0 {
			t.Errorf("accepted stream with %+v", o)
		}
	})
}
