package tokenizer

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Chat templates load from the files transformers reads: chat_template.jinja
// replaces tokenizer_config.json's template, additional_chat_templates/ adds
// named ones, and chat_template.json is the fallback when neither gives one.
// Qwen 3's tokenizer_config.json stands for one that ships a template.
func TestLoadDirTemplateFiles(t *testing.T) {
	const (
		fromJinja = `J{{ messages[0]['content'] }}`
		fromJSON  = `P{{ messages[0]['content'] }}`
		toolUse   = `T{{ messages[0]['content'] }}`
	)
	procJSON, err := json.Marshal(map[string]string{"chat_template": fromJSON})
	if err != nil {
		t.Fatal(err)
	}
	qwenCfg := func(t *testing.T) string {
		data, err := os.ReadFile(filepath.Join(familyDir(t, "qwen3"), "tokenizer_config.json"))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	tests := []struct {
		name      string
		withCfg   bool              // start from Qwen 3's tokenizer_config.json
		files     map[string]string // more files in the directory
		want      string            // rendering of one user message "x"; "" for no template
		wantNames []string          // named templates
		wantErr   error
	}{
		{name: "jinja file without a config template",
			files: map[string]string{chatTemplateFile: fromJinja}, want: "Jx"},
		{name: "jinja file replaces the config template", withCfg: true,
			files: map[string]string{chatTemplateFile: fromJinja}, want: "Jx"},
		{name: "processor template as the fallback",
			files: map[string]string{processorTemplateFile: string(procJSON)}, want: "Px"},
		{name: "config template before the processor's", withCfg: true,
			files: map[string]string{processorTemplateFile: string(procJSON)}, want: "<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n"},
		{name: "jinja file before the processor's",
			files: map[string]string{chatTemplateFile: fromJinja, processorTemplateFile: string(procJSON)}, want: "Jx"},
		{name: "named templates beside the jinja file",
			files: map[string]string{chatTemplateFile: fromJinja, chatTemplateDir + "/tool_use.jinja": toolUse, chatTemplateDir + "/notes.txt": "x"},
			want:  "Jx", wantNames: []string{"default", "tool_use"}},
		{name: "no template files", want: ""},
		{name: "malformed processor template",
			files: map[string]string{processorTemplateFile: `{"chat_template": 3}`}, wantErr: ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, tt.files)
			var cfg Config
			if tt.withCfg {
				var err error
				if cfg, err = parseConfig([]byte(qwenCfg(t))); err != nil {
					t.Fatal(err)
				}
			}
			err := loadTemplateFiles(dir, &cfg)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("loadTemplateFiles err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tk := &Tokenizer{config: cfg}
			if names := slices.Sorted(maps.Keys(tk.Config().ChatTemplates)); !slices.Equal(names, tt.wantNames) {
				t.Errorf("named templates %v, want %v", names, tt.wantNames)
			}
			checkTemplate(t, tk, tt.want)
		})
	}
}

// LoadDir reads chat_template.jinja, except that a Harmony vocabulary
// (GPT-OSS, which ships its template only as that file) offers no template:
// vLLM renders its chat in the Harmony format instead. Mistral (llama2)
// stands for a model without a template in tokenizer_config.json.
func TestLoadDirReadsChatTemplateJinja(t *testing.T) {
	tests := []struct {
		family string
		want   string
	}{
		{"llama2", "Jx"},
		{"gptoss", ""},
	}
	for _, tt := range tests {
		t.Run(tt.family, func(t *testing.T) {
			tj, err := os.ReadFile(filepath.Join(familyDir(t, tt.family), "tokenizer.json"))
			if err != nil {
				t.Fatal(err)
			}
			dir := writeFiles(t, map[string]string{"tokenizer.json": string(tj), chatTemplateFile: `J{{ messages[0]['content'] }}`})
			tk, err := LoadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if tk.Harmony() != (tt.family == "gptoss") {
				t.Errorf("Harmony() = %v", tk.Harmony())
			}
			checkTemplate(t, tk, tt.want)
		})
	}
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// checkTemplate renders one user message "x" with tk's default template;
// want "" means tk has none.
func checkTemplate(t *testing.T, tk *Tokenizer, want string) {
	t.Helper()
	ct, err := tk.ChatTemplate()
	if want == "" {
		if !errors.Is(err, ErrTemplate) {
			t.Fatalf("ChatTemplate err = %v, want ErrTemplate", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	got, err := ct.Render(ChatRequest{Messages: json.RawMessage(`[{"role":"user","content":"x"}]`), AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("Render = %q, want %q", got, want)
	}
}
