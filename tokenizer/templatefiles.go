package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Chat-template files that can sit next to tokenizer_config.json.
const (
	chatTemplateFile      = "chat_template.jinja"
	chatTemplateDir       = "additional_chat_templates"
	processorTemplateFile = "chat_template.json"
)

// loadTemplateFiles reads the chat-template files in dir into c, as
// transformers loads a tokenizer: chat_template.jinja replaces any template
// in tokenizer_config.json, and each additional_chat_templates/<name>.jinja
// is a named template beside it ("default" being the main one). A
// chat_template.json (a processor's {"chat_template": ...}, which vLLM uses
// for models with a processor) is read only when no other file gives a
// default template.
func loadTemplateFiles(dir string, c *Config) error {
	src, ok, err := readOptional(filepath.Join(dir, chatTemplateFile))
	if err != nil {
		return err
	}
	if ok {
		c.ChatTemplate, c.ChatTemplates = src, nil
	}
	if err := loadNamedTemplates(filepath.Join(dir, chatTemplateDir), c); err != nil {
		return err
	}
	if c.ChatTemplate != "" {
		return nil
	}
	return loadProcessorTemplate(filepath.Join(dir, processorTemplateFile), c)
}

func loadNamedTemplates(dir string, c *Config) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", chatTemplateDir, err)
	}
	names := slices.DeleteFunc(entries, func(e fs.DirEntry) bool {
		return e.IsDir() || !strings.HasSuffix(e.Name(), ".jinja")
	})
	if len(names) == 0 {
		return nil
	}
	if c.ChatTemplates == nil {
		c.ChatTemplates = map[string]string{}
		if c.ChatTemplate != "" {
			c.ChatTemplates["default"] = c.ChatTemplate
		}
	}
	for _, e := range names {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return fmt.Errorf("reading %s: %w", chatTemplateDir, err)
		}
		c.ChatTemplates[strings.TrimSuffix(e.Name(), ".jinja")] = string(data)
	}
	c.ChatTemplate = c.ChatTemplates["default"]
	return nil
}

func loadProcessorTemplate(path string, c *Config) error {
	data, ok, err := readOptional(path)
	if err != nil || !ok {
		return err
	}
	var j struct {
		ChatTemplate string `json:"chat_template"`
	}
	if err := json.Unmarshal([]byte(data), &j); err != nil {
		return fmt.Errorf("decoding %s: %w: %w", processorTemplateFile, ErrMalformed, err)
	}
	c.ChatTemplate = j.ChatTemplate
	return nil
}

// readOptional reads a file that may be absent.
func readOptional(path string) (string, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("reading %s: %w", filepath.Base(path), err)
	}
	return string(data), true, nil
}
