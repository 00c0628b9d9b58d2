package tokenizer

// VLLMVersion is the vLLM release whose request preprocessing the router
// mirrors before it renders and encodes a prompt: which fields it reads, their
// defaults (add_special_tokens on for completions, off for chat), and how it
// normalises chat messages (a null content becomes empty, a bare string in a
// content list is a text part, empty text parts are dropped). Other versions
// may differ; the README lists what is version dependent.
const VLLMVersion = "0.33.0"
