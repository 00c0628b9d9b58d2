package wire

import "testing"

func TestSaltAndOpaque(t *testing.T) {
	tests := []struct {
		name       string
		ev         Event
		wantSalt   string
		wantOpaque []bool
	}{
		{name: "no extra keys", ev: Event{}, wantOpaque: []bool{false}},
		{name: "sglang top-level salt", ev: Event{CacheSalt: "s", HasParent: true}, wantSalt: "s"},
		{name: "vllm salt on the first block", ev: Event{ExtraKeys: [][]byte{pack(arr{"s"}), nil}},
			wantSalt: "s", wantOpaque: []bool{false, false}},
		{name: "vllm salt ignored after a parent", ev: Event{HasParent: true, ExtraKeys: [][]byte{pack(arr{"s"})}}},
		{name: "lora name is not the salt", ev: Event{LoRAName: "ad", ExtraKeys: [][]byte{pack(arr{"ad"})}},
			wantOpaque: []bool{false}},
		{name: "lora then salt", ev: Event{LoRAName: "ad", ExtraKeys: [][]byte{pack(arr{"ad", "s"})}},
			wantSalt: "s", wantOpaque: []bool{false}},
		{name: "salt equal to the lora name", ev: Event{LoRAName: "ad", ExtraKeys: [][]byte{pack(arr{"ad", "ad"})}},
			wantSalt: "ad"},
		{name: "multimodal pair then salt", ev: Event{ExtraKeys: [][]byte{pack(arr{arr{"h", 0}, "s"}), pack(arr{arr{"h", 0}})}},
			wantSalt: "s", wantOpaque: []bool{true, true}},
		{name: "prompt embeddings digest", ev: Event{ExtraKeys: [][]byte{pack(arr{[]byte{1, 2}})}}, wantOpaque: []bool{true}},
		{name: "entry not a tuple", ev: Event{ExtraKeys: [][]byte{pack(7)}}, wantOpaque: []bool{true}},
		{name: "truncated entry", ev: Event{ExtraKeys: [][]byte{{0x92, 0xa1}}}, wantOpaque: []bool{true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.ev.Salt(); got != tt.wantSalt {
				t.Errorf("Salt() = %q, want %q", got, tt.wantSalt)
			}
			for i, w := range tt.wantOpaque {
				if got := tt.ev.Opaque(i); got != w {
					t.Errorf("Opaque(%d) = %v, want %v", i, got, w)
				}
			}
		})
	}
}
