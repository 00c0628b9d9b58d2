package openai

import "testing"

func TestDecodeChunk(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		content bool
		usage   bool
		errMsg  string
		err     bool
	}{
		{name: "completion text", data: `{"choices":[{"index":0,"text":"hi"}],"usage":null}`, content: true},
		{name: "empty text", data: `{"choices":[{"text":""}]}`},
		{name: "chat delta", data: `{"choices":[{"delta":{"role":"assistant","content":"x"}}]}`, content: true},
		{name: "chat delta null content", data: `{"choices":[{"delta":{"content":null}}]}`},
		{name: "second choice has text", data: `{"choices":[{"text":""},{"text":"b"}]}`, content: true},
		{name: "usage chunk", data: usageEvent, usage: true},
		{name: "error event", data: `{"error":{"message":"prefill failed","type":"BadRequestError","code":400}}`, errMsg: "prefill failed"},
		{name: "not json", data: `{oops`, err: true},
		{name: "done is not a chunk", data: `[DONE]`, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := DecodeChunk([]byte(tt.data))
			if (err != nil) != tt.err {
				t.Fatalf("error %v, want error %v", err, tt.err)
			}
			if c.HasContent() != tt.content || (c.Usage != nil) != tt.usage {
				t.Fatalf("chunk %+v: content %v, usage %v; want %v, %v", c, c.HasContent(), c.Usage != nil, tt.content, tt.usage)
			}
			if got := ""; c.Error != nil {
				got = c.Error.Message
				if got != tt.errMsg {
					t.Fatalf("error message %q, want %q", got, tt.errMsg)
				}
			} else if tt.errMsg != "" {
				t.Fatal("no error event read")
			}
		})
	}
}
