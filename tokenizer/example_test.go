package tokenizer_test

import (
	"encoding/json"
	"fmt"
	"log"
	"path/filepath"

	"github.com/warmroute/warmroute/tokenizer"
)

// Example loads the files a model server loads and encodes a chat request
// the way vLLM does. It runs when the test setup has cached the Qwen 3
// files (see files_test.go).
func Example() {
	tk, err := tokenizer.LoadDir(filepath.Join("..", ".cache", "tokenizers", "qwen3"))
	if err != nil {
		log.Print(err)
		return
	}
	ct, err := tk.ChatTemplate()
	if err != nil {
		log.Fatal(err)
	}
	msgs := json.RawMessage(`[{"role":"user","content":"Hello!"}]`)
	ids, err := tk.EncodeChat(ct, tokenizer.ChatRequest{Messages: msgs, AddGenerationPrompt: true})
	if err != nil {
		log.Fatal(err)
	}
	text, _ := tk.Decode(ids, false)
	fmt.Printf("%d tokens\n%s", len(ids), text)
	// Output:
	// 10 tokens
	// <|im_start|>user
	// Hello!<|im_end|>
	// <|im_start|>assistant
}
