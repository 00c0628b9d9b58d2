package scorer

import (
	"context"
	"slices"
	"testing"

	"github.com/warmroute/warmroute/tokenizer"
	"github.com/warmroute/warmroute/tokenizer/tokenizertest"
)

// Message shapes vLLM renders alike encode alike: a null or missing
// assistant content is an empty string (not "None"), and a bare string in a
// content list is a text part.
func TestLocalTokensChatContentShapes(t *testing.T) {
	tk, err := tokenizer.LoadDir(tokenizertest.Dir(t, "llama3"))
	if err != nil {
		t.Fatal(err)
	}
	lt := NewLocalTokens(tk)
	chat := func(raws ...string) *Request {
		req := &Request{Kind: KindChat}
		for _, r := range raws {
			req.Messages = append(req.Messages, Message{Raw: []byte(r)})
		}
		return req
	}
	const call = `"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]`
	tests := []struct {
		name      string
		got, want *Request
	}{
		{"null assistant content",
			chat(`{"role":"user","content":"q"}`, `{"role":"assistant","content":null,`+call+`}`),
			chat(`{"role":"user","content":"q"}`, `{"role":"assistant","content":"",`+call+`}`)},
		{"missing assistant content",
			chat(`{"role":"user","content":"q"}`, `{"role":"assistant",`+call+`}`),
			chat(`{"role":"user","content":"q"}`, `{"role":"assistant","content":"",`+call+`}`)},
		{"bare strings in a content list",
			chat(`{"role":"user","content":["a",{"type":"text","text":"b"}]}`),
			chat(`{"role":"user","content":"a\nb"}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := lt.Tokens(context.Background(), tt.got, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, err := lt.Tokens(context.Background(), tt.want, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("ids differ:\n got %v\nwant %v", got, want)
			}
		})
	}
}
