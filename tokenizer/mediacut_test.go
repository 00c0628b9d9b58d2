package tokenizer

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestMediaCut: a chat with media renders and encodes up to where the first
// message holding media starts its content, as vLLM renders it there (it
// writes the media's placeholders at that point for a string-format
// template, at the part for a looping one); the ids end at the last added
// token, so none depends on what followed in vLLM's prompt. Later messages
// and the media message's own text are not in the prompt.
func TestMediaCut(t *testing.T) {
	const image = `{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}`
	msgs := func(content string) string {
		return `[{"role":"system","content":"You are terse."},{"role":"user","content":"Earlier question"},` +
			`{"role":"assistant","content":"Earlier answer"},{"role":"user","content":` + content + `},` +
			`{"role":"assistant","content":"later"},{"role":"user","content":"last"}]`
	}
	const mark = "REFERENCE_MARK"
	for _, fam := range []string{"llama3", "qwen3", "gemma3", "deepseek_v3"} {
		t.Run(fam, func(t *testing.T) {
			tk := loadFamily(t, fam)
			ct, err := tk.ChatTemplate()
			if err != nil {
				t.Fatal(err)
			}
			ref := ChatRequest{Messages: json.RawMessage(msgs(`"` + mark + `"`)), AddGenerationPrompt: true}
			refText, err := ct.Render(ref)
			if err != nil {
				t.Fatal(err)
			}
			refIDs, err := tk.Encode(refText, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, content := range []string{
				`[{"type":"text","text":"before"},` + image + `,{"type":"text","text":"after"}]`,
				`[` + image + `]`,
				`[{"type":"text","text":"What is this?"},` + image + `]`,
			} {
				req := ChatRequest{Messages: json.RawMessage(msgs(content)), AddGenerationPrompt: true}
				got, err := ct.Render(req)
				if err != nil {
					t.Fatal(err)
				}
				if want := refText[:strings.Index(refText, mark)]; got != want {
					t.Fatalf("%s: render %q, want the prefix before the message's content %q", content, got, want)
				}
				ids, err := tk.EncodeChat(ct, req)
				if err != nil {
					t.Fatal(err)
				}
				if len(ids) == 0 || !slices.Equal(ids, refIDs[:len(ids)]) {
					t.Fatalf("%s: ids %v are not a prefix of %v", content, ids, refIDs)
				}
				if _, ok := tk.added[ids[len(ids)-1]]; !ok {
					t.Fatalf("%s: ids end with %d, not an added token", content, ids[len(ids)-1])
				}
			}
		})
	}
	t.Run("media in a system message is refused", func(t *testing.T) {
		ct, err := loadFamily(t, "qwen3").ChatTemplate()
		if err != nil {
			t.Fatal(err)
		}
		_, err = ct.Render(ChatRequest{Messages: json.RawMessage(`[{"role":"system","content":[` + image + `]},{"role":"user","content":"hi"}]`)})
		if !errors.Is(err, ErrUnsupported) {
			t.Fatalf("err = %v, want ErrUnsupported", err)
		}
	})
}

func TestTrimToAdded(t *testing.T) {
	tk := loadFamily(t, "qwen3")
	start, ok := tk.addedID("<|im_start|>")
	if !ok {
		t.Fatal("no <|im_start|>")
	}
	for _, tt := range []struct {
		ids  []uint32
		from int
		want []uint32
	}{
		{[]uint32{1, start, 2, 3}, 0, []uint32{1, start}},
		{[]uint32{1, start, 2, 3}, 2, []uint32{1, start}},
		{[]uint32{start, 1, 2}, 1, []uint32{start}},
		{[]uint32{1, 2}, 0, []uint32{}},
		{[]uint32{1, start}, 0, []uint32{1, start}},
	} {
		if got := tk.TrimToAdded(slices.Clone(tt.ids), tt.from); !slices.Equal(got, tt.want) {
			t.Errorf("TrimToAdded(%v, %d) = %v, want %v", tt.ids, tt.from, got, tt.want)
		}
	}
}

// TestDriftMediaPrefix: for a request with media the engine's ids go on
// past the router's (the media's placeholders and what follows), so drift
// agrees when they start with the router's ids and disagrees otherwise.
func TestDriftMediaPrefix(t *testing.T) {
	tk := loadFamily(t, "qwen3")
	ct, err := tk.ChatTemplate()
	if err != nil {
		t.Fatal(err)
	}
	req := ChatRequest{AddGenerationPrompt: true, Messages: json.RawMessage(`[{"role":"user","content":"Earlier"},` +
		`{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"What is it?"}]}]`)}
	local, err := tk.EncodeChat(ct, req)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		engine []uint32
		result string
	}{
		{"engine ids start with the router's", append(slices.Clone(local), 151655, 151655, 42), "agree"},
		{"engine ids differ before the media", append([]uint32{7}, local[1:]...), "disagree"},
		{"engine ids shorter", local[:len(local)-1], "disagree"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_ = json.NewEncoder(w).Encode(map[string]any{"tokens": tc.engine, "count": len(tc.engine)})
			}))
			defer srv.Close()
			m, err := NewMetrics(prometheus.NewRegistry())
			if err != nil {
				t.Fatal(err)
			}
			d := NewDrift(tk, ct, NewRemote(srv.URL, nil), 1, m)
			_, _ = d.CheckChat(context.Background(), req)
			if n := testutil.ToFloat64(m.driftChecks.WithLabelValues("chat", tc.result)); n != 1 {
				t.Fatalf("chat/%s count = %v, want 1", tc.result, n)
			}
		})
	}
}
