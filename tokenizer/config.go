package tokenizer

import (
	"encoding/json"
	"fmt"
)

// Config is the part of tokenizer_config.json the router needs, with the chat
// templates of the template files beside it (see LoadDir). The zero value
// means "no config file": no chat template and no named tokens.
type Config struct {
	// ChatTemplate is the default Jinja chat template, if any.
	ChatTemplate string
	// ChatTemplates holds named templates (such as "tool_use") when the
	// file lists several.
	ChatTemplates map[string]string
	BOSToken      string
	EOSToken      string
	// AddBOSToken is tokenizer_config.json's add_bos_token: true.
	AddBOSToken bool
	// TokenizerClass is its tokenizer_class (transformers' class name).
	TokenizerClass string
}

type configJSON struct {
	AddBOSToken    *bool           `json:"add_bos_token"`
	TokenizerClass string          `json:"tokenizer_class"`
	ChatTemplate   json.RawMessage `json:"chat_template"`
	BOSToken       json.RawMessage `json:"bos_token"`
	EOSToken       json.RawMessage `json:"eos_token"`
}

func parseConfig(data []byte) (Config, error) {
	var j configJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return Config{}, fmt.Errorf("decoding tokenizer_config.json: %w: %w", ErrMalformed, err)
	}
	var c Config
	var err error
	if c.ChatTemplate, c.ChatTemplates, err = parseTemplates(j.ChatTemplate); err != nil {
		return Config{}, err
	}
	c.BOSToken, c.EOSToken = tokenString(j.BOSToken), tokenString(j.EOSToken)
	c.AddBOSToken = j.AddBOSToken != nil && *j.AddBOSToken
	c.TokenizerClass = j.TokenizerClass
	return c, nil
}

// parseTemplates accepts a string or a list of {name, template}; the one
// named "default" is the default, as in transformers.
func parseTemplates(raw json.RawMessage) (string, map[string]string, error) {
	if isNull(raw) {
		return "", nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil, nil
	}
	var list []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return "", nil, fmt.Errorf("decoding chat_template: %w: %w", ErrMalformed, err)
	}
	named := make(map[string]string, len(list))
	for _, t := range list {
		named[t.Name] = t.Template
	}
	return named["default"], named, nil
}

// tokenString reads a token given as a string or as an AddedToken object.
func tokenString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Content string `json:"content"`
	}
	if json.Unmarshal(raw, &o) == nil {
		return o.Content
	}
	return ""
}
