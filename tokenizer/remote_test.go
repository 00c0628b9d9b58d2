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

// engineSim is a minimal model server implementing vLLM's /tokenize with a
// given tokenizer.
func engineSim(t *testing.T, tk *Tokenizer) *httptest.Server {
	t.Helper()
	ct, err := tk.ChatTemplate()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Prompt      *string         `json:"prompt"`
			Messages    json.RawMessage `json:"messages"`
			AddSpecial  bool            `json:"add_special_tokens"`
			AddGenerate bool            `json:"add_generation_prompt"`
			Continue    bool            `json:"continue_final_message"`
			Template    string          `json:"chat_template"`
		}
		if r.URL.Path != "/tokenize" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var ids []uint32
		var err error
		if req.Prompt != nil {
			ids, err = tk.Encode(*req.Prompt, req.AddSpecial)
		} else {
			ids, err = tk.EncodeChat(ct, ChatRequest{Messages: req.Messages, AddGenerationPrompt: req.AddGenerate, AddSpecialTokens: req.AddSpecial,
				ContinueFinalMessage: req.Continue, Template: req.Template})
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"count": len(ids), "max_model_len": 4096, "tokens": ids})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRemoteTokenize(t *testing.T) {
	tk := loadFamily(t, "qwen3")
	srv := engineSim(t, tk)
	r := NewRemote(srv.URL, nil)
	tests := []struct {
		name    string
		prompt  string
		special bool
	}{
		{"plain", "Hello world", false},
		{"special", "<|im_start|>user\nhi<|im_end|>", true},
		{"empty", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Tokenize(context.Background(), tc.prompt, tc.special)
			want, _ := tk.Encode(tc.prompt, tc.special)
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("Tokenize = %v, %v; want %v", got, err, want)
			}
		})
	}
}

func TestRemoteErrors(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"status", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", http.StatusInternalServerError) }},
		{"not json", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("<html>")) }},
		{"count mismatch", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(`{"count":3,"tokens":[1]}`)) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			_, err := NewRemote(srv.URL, nil).Tokenize(context.Background(), "x", false)
			if !errors.Is(err, ErrRemote) {
				t.Fatalf("err = %v, want ErrRemote", err)
			}
		})
	}
}

func TestDriftDetectsWrongTokenizer(t *testing.T) {
	qwen, llama := loadFamily(t, "qwen3"), loadFamily(t, "llama3")
	ct, err := qwen.ChatTemplate()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		engine *Tokenizer
		result string
	}{
		{"same tokenizer agrees", qwen, "agree"},
		{"wrong tokenizer disagrees", llama, "disagree"},
	}
	msgs := json.RawMessage(`[{"role":"user","content":"Hello 123456 world, naïve café!"}]`)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m, err := NewMetrics(reg)
			if err != nil {
				t.Fatal(err)
			}
			d := NewDrift(qwen, ct, NewRemote(engineSim(t, tc.engine).URL, nil), 1, m)
			if !d.Sampled() {
				t.Fatal("rate 1 must sample every request")
			}
			d.CheckPrompt(context.Background(), "Hello 123456 world", false)
			d.CheckChat(context.Background(), ChatRequest{Messages: msgs, AddGenerationPrompt: true})
			for _, mode := range []string{"prompt", "chat"} {
				if n := testutil.ToFloat64(m.driftChecks.WithLabelValues(mode, tc.result)); n != 1 {
					t.Fatalf("%s/%s count = %v, want 1", mode, tc.result, n)
				}
			}
			if err := testutil.GatherAndCompare(reg, strings.NewReader(""), "warmroute_tokenizer_drift_checks_total"); err == nil {
				t.Fatal("metric not exposed under its documented name")
			}
		})
	}
}

// continue_final_message and chat_template reach the engine's /tokenize.
func TestRemoteChatFields(t *testing.T) {
	tk := loadFamily(t, "qwen3")
	r := NewRemote(engineSim(t, tk).URL, nil)
	ct, err := tk.ChatTemplate()
	if err != nil {
		t.Fatal(err)
	}
	msgs := json.RawMessage(`[{"role":"user","content":"hi"},{"role":"assistant","content":"Once upon"}]`)
	for _, req := range []ChatRequest{
		{Messages: msgs, ContinueFinalMessage: true},
		{Messages: msgs, AddGenerationPrompt: true, Template: "{{ messages[1].content }}"},
	} {
		want, err := tk.EncodeChat(ct, req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.TokenizeChat(context.Background(), req)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("TokenizeChat = %v, %v; want %v", got, err, want)
		}
	}
}
