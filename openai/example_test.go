package openai_test

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/warmroute/warmroute/openai"
)

const stream = `data: {"choices":[{"text":"Hel"}],"usage":null}

data: {"choices":[{"text":"lo"}],"usage":null}

: keep-alive

data: {"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":32}}}

data: [DONE]

`

// An EventReader pulls a stream's events; each is decoded as a chunk.
func ExampleEventReader() {
	r := openai.NewEventReader(strings.NewReader(stream), 0)
	for {
		data, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		if openai.IsDone(data) {
			fmt.Println("done")
			continue
		}
		c, err := openai.DecodeChunk(data)
		if err != nil {
			fmt.Println(err)
			return
		}
		if c.Usage != nil {
			prompt, cached, ok := c.Usage.CachedPrompt()
			fmt.Println("usage:", prompt, cached, ok)
			continue
		}
		fmt.Printf("text %q\n", c.Choices[0].Text)
	}
	// Output:
	// text "Hel"
	// text "lo"
	// usage: 40 32 true
	// done
}

// An EventParser is fed a body in chunks split anywhere, as a proxy sees
// it, and keeps only the event that carries usage.
func ExampleEventParser() {
	var last []byte
	p := openai.NewEventParser(64<<10, func(data []byte) {
		if openai.HasUsage(data) {
			last = append(last[:0], data...) // data is only valid during the call
		}
	})
	for chunk := range slices.Chunk([]byte(stream), 7) {
		p.Feed(chunk)
	}
	p.End()
	u, err := openai.DecodeUsage(last)
	fmt.Println(u.Prompt(), *u.Cached(), err)
	// Output: 40 32 <nil>
}
