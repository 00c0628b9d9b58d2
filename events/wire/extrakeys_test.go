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

func TestSaltExtraKey(t *testing.T) {
	long := string(make([]byte, 300))
	for _, tt := range []struct{ lora, salt string }{
		{"", "s"}, {"", "tenant-with-a-name-longer-than-31-bytes"}, {"", long}, {"ad", "s"}, {"ad", "ad"},
	} {
		raw := SaltExtraKey(tt.lora, tt.salt)
		ev := Event{LoRAName: tt.lora, ExtraKeys: [][]byte{raw}}
		if ev.Salt() != tt.salt || ev.Opaque(0) {
			t.Errorf("SaltExtraKey(%q, %d bytes) reads back as salt %q, opaque %v", tt.lora, len(tt.salt), ev.Salt(), ev.Opaque(0))
		}
		want := pack(arr{tt.salt})
		if tt.lora != "" {
			want = pack(arr{tt.lora, tt.salt})
		}
		if string(raw) != string(want) {
			t.Errorf("SaltExtraKey(%q, %d bytes) = %x, want vLLM's encoding %x", tt.lora, len(tt.salt), raw, want)
		}
		if salt, opaque := ScanExtraKey(raw, tt.lora); salt != tt.salt || opaque {
			t.Errorf("ScanExtraKey = %q, %v", salt, opaque)
		}
	}
	if salt, opaque := ScanExtraKey(nil, ""); salt != "" || opaque {
		t.Errorf("ScanExtraKey(nil) = %q, %v", salt, opaque)
	}
}

func TestFullAttention(t *testing.T) {
	for kind, want := range map[string]bool{"": true, "full_attention": true, "mla_attention": true,
		"sink_full_attention": true, "sliding_window": false, "mamba": false, "chunked_local_attention": false} {
		if got := FullAttention(kind); got != want {
			t.Errorf("FullAttention(%q) = %v, want %v", kind, got, want)
		}
	}
}
