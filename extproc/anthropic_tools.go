package extproc

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
)

// Tools of a /v1/messages request, as vLLM 0.33 converts them
// (AnthropicServingMessages._resolve_tools and _convert_tools):
//   - each tool is a chat function tool (name, description, input_schema as
//     the parameters, strict, defer_loading); an input_schema without "type"
//     gets "type": "object" appended, as vLLM's AnthropicTool validator does;
//   - tool_addition and tool_removal blocks (allowed only in system-role
//     messages) change the tools in effect at the end of the conversation,
//     in message order: adding a declared tool by reference clears its
//     defer_loading, adding by definition declares (or replaces) it, removal
//     drops it. A reference to an undeclared tool is refused as vLLM refuses it.

type wireAnthropicTool struct {
	Name         jsontext.Value `json:"name"`
	Description  jsontext.Value `json:"description"`
	InputSchema  jsontext.Value `json:"input_schema"`
	Strict       jsontext.Value `json:"strict"`
	DeferLoading jsontext.Value `json:"defer_loading"`
}

type wireToolChange struct {
	Type       string             `json:"type"`
	Name       *string            `json:"name"`
	Definition *wireAnthropicTool `json:"definition"`
}

// toolChange is one tool_addition or tool_removal block, validated.
type toolChange struct {
	remove bool
	name   string
	def    *anthropicTool // set for a tool_addition by definition
}

// anthropicTool is a validated tool, in vLLM's field order.
type anthropicTool struct {
	name         string
	description  jsontext.Value
	inputSchema  jsontext.Value
	strict       jsontext.Value
	deferLoading jsontext.Value
}

// readToolChange validates a tool_addition or tool_removal block's tool.
func readToolChange(b *wireBlock, field func(string) string) (toolChange, error) {
	var c wireToolChange
	if isNull(b.Tool) {
		return toolChange{}, invalid(field(".tool"), "tool is required for "+b.Type+" blocks")
	}
	if b.Tool.Kind() != '{' || json.Unmarshal(b.Tool, &c, decodeOptions) != nil {
		return toolChange{}, wrongType(field(".tool"), "an object")
	}
	ch := toolChange{remove: b.Type == "tool_removal"}
	switch c.Type {
	case "tool_reference":
		if c.Name == nil {
			return toolChange{}, wrongType(field(".tool.name"), "a string")
		}
		ch.name = *c.Name
	case "tool_definition":
		if c.Definition == nil {
			return toolChange{}, wrongType(field(".tool.definition"), "a tool object")
		}
		def, err := readAnthropicTool(c.Definition, field(".tool.definition"))
		if err != nil {
			return toolChange{}, err
		}
		ch.name, ch.def = def.name, &def
	default:
		return toolChange{}, wrongType(field(".tool.type"), `"tool_reference" or "tool_definition"`)
	}
	if ch.remove && ch.def != nil {
		return toolChange{}, invalid(field(".tool"), "tool_removal only accepts a tool_reference")
	}
	return ch, nil
}

func invalid(field, msg string) error {
	return &fieldError{field, fmt.Errorf("%w: %s", ErrInvalidValue, msg)}
}

func readAnthropicTool(t *wireAnthropicTool, field string) (anthropicTool, error) {
	var name string
	if t.Name.Kind() != '"' || json.Unmarshal(t.Name, &name) != nil {
		return anthropicTool{}, wrongType(field+".name", "a string")
	}
	if t.InputSchema.Kind() != '{' {
		return anthropicTool{}, wrongType(field+".input_schema", "an object")
	}
	schema, err := defaultObjectType(t.InputSchema)
	if err != nil {
		return anthropicTool{}, wrongType(field+".input_schema", "an object")
	}
	return anthropicTool{name: name, description: orNull(t.Description), inputSchema: schema,
		strict: nonNull(t.Strict), deferLoading: nonNull(t.DeferLoading)}, nil
}

// defaultObjectType appends "type": "object" to a schema without "type".
func defaultObjectType(schema jsontext.Value) (jsontext.Value, error) {
	var keys map[string]jsontext.Value
	if err := json.Unmarshal(schema, &keys); err != nil {
		return nil, err
	}
	if _, ok := keys["type"]; ok {
		return schema, nil
	}
	c := schema.Clone()
	if err := c.Compact(); err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return jsontext.Value(`{"type":"object"}`), nil
	}
	return append(c[:len(c)-1], `,"type":"object"}`...), nil
}

// anthropicTools converts the declared tools, with the message's tool
// changes applied. Nil when there are none.
func anthropicTools(v jsontext.Value, changes []toolChange) ([]byte, error) {
	if isNull(v) && len(changes) == 0 {
		return nil, nil
	}
	var raw []wireAnthropicTool
	if !isNull(v) && (v.Kind() != '[' || json.Unmarshal(v, &raw, decodeOptions) != nil) {
		return nil, wrongType("tools", "a list of tool objects")
	}
	tools := make([]anthropicTool, 0, len(raw))
	for i := range raw {
		t, err := readAnthropicTool(&raw[i], fmt.Sprintf("tools[%d]", i))
		if err != nil {
			return nil, err
		}
		if len(changes) > 0 {
			tools = setTool(tools, t) // vLLM keys the tools by name only to apply changes
		} else {
			tools = append(tools, t)
		}
	}
	tools, err := applyToolChanges(tools, changes)
	if err != nil {
		return nil, err
	}
	out := make([]chatTool, len(tools))
	for i, t := range tools {
		out[i] = chatTool{Type: "function", Function: chatFunction{Name: t.name,
			Description: t.description, Parameters: t.inputSchema, Strict: t.strict, DeferLoading: t.deferLoading}}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("%w: encoding tools: %v", ErrMalformedJSON, err)
	}
	return b, nil
}

// setTool is Python's tools[name] = t on an insertion-ordered dict.
func setTool(tools []anthropicTool, t anthropicTool) []anthropicTool {
	if i := toolIndex(tools, t.name); i >= 0 {
		tools[i] = t
		return tools
	}
	return append(tools, t)
}

func toolIndex(tools []anthropicTool, name string) int {
	for i := range tools {
		if tools[i].name == name {
			return i
		}
	}
	return -1
}

// applyToolChanges mirrors vLLM's _resolve_tools: changes apply in order,
// and the tools removed last are left out.
func applyToolChanges(tools []anthropicTool, changes []toolChange) ([]anthropicTool, error) {
	if len(changes) == 0 {
		return tools, nil
	}
	removed := map[string]bool{}
	for _, c := range changes {
		kind := "tool_addition"
		if c.remove {
			kind = "tool_removal"
		}
		switch i := toolIndex(tools, c.name); {
		case c.def != nil:
			tools = setTool(tools, *c.def)
		case i < 0:
			return nil, invalid("messages", fmt.Sprintf("%s references tool %s, which is not declared in tools", kind, pyRepr(c.name)))
		case !c.remove:
			tools[i].deferLoading = nil
		}
		removed[c.name] = c.remove
	}
	out := tools[:0]
	for _, t := range tools {
		if !removed[t.name] {
			out = append(out, t)
		}
	}
	return out, nil
}
