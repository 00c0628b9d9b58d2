package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestEncodeToken(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"ipv4 endpoint", "10.0.0.1:8000", "10%2E0%2E0%2E1%3A8000"},
		{"ipv6 endpoint", "[::1]:8000", "%5B%3A%3A1%5D%3A8000"},
		{"hf model", "meta-llama/Llama-3.1-8B", "meta-llama%2FLlama-3%2E1-8B"},
		{"wildcards and space", "a*b>c d", "a%2Ab%3Ec%20d"},
		{"percent itself", "50%", "50%25"},
		{"unicode", "modèle", "mod%C3%A8le"},
		{"empty", "", "%"},
		{"plain", "qwen_3-8b", "qwen_3-8b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := EncodeToken(tc.in)
			if got != tc.want {
				t.Fatalf("EncodeToken(%q) = %q, want %q", tc.in, got, tc.want)
			}
			back, err := DecodeToken(got)
			if err != nil || back != tc.in {
				t.Fatalf("DecodeToken(%q) = %q, %v; want %q", got, back, err, tc.in)
			}
		})
	}
}

func TestDecodeTokenRejects(t *testing.T) {
	for _, tok := range []string{"", "a.b", "a*", ">", "%2", "%zz", "%2e", "%41", "a b", "%%"} {
		t.Run(fmt.Sprintf("%q", tok), func(t *testing.T) {
			if got, err := DecodeToken(tok); !errors.Is(err, ErrBadSubject) {
				t.Fatalf("DecodeToken(%q) = %q, %v; want ErrBadSubject", tok, got, err)
			}
		})
	}
}

func TestSubjects(t *testing.T) {
	ev, err := EventSubject("org/model.v2", "10.0.0.1:8000")
	if err != nil {
		t.Fatal(err)
	}
	if want := "warmroute.kv.v1.org%2Fmodel%2Ev2.10%2E0%2E0%2E1%3A8000"; ev != want {
		t.Fatalf("EventSubject = %q, want %q", ev, want)
	}
	m, e, err := ParseSubject(EventSubjectPrefix, ev)
	if err != nil || m != "org/model.v2" || e != "10.0.0.1:8000" {
		t.Fatalf("ParseSubject = %q %q %v", m, e, err)
	}
	wc, _ := HeartbeatWildcard("org/model.v2")
	if want := "warmroute.hb.v1.org%2Fmodel%2Ev2.*"; wc != want {
		t.Fatalf("HeartbeatWildcard = %q, want %q", wc, want)
	}
	if _, err := EventSubject("", "x"); !errors.Is(err, ErrBadSubject) {
		t.Fatalf("EventSubject with empty model: err = %v", err)
	}
}

func TestParseSubjectRejects(t *testing.T) {
	tests := []struct{ name, subj string }{
		{"other prefix", "foo.kv.v1.m.e"},
		{"heartbeat prefix for events", "warmroute.hb.v1.m.e"},
		{"one token", "warmroute.kv.v1.m"},
		{"three tokens", "warmroute.kv.v1.m.e.x"},
		{"bad escape", "warmroute.kv.v1.m%zz.e"},
		{"empty endpoint", "warmroute.kv.v1.m."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := ParseSubject(EventSubjectPrefix, tc.subj); !errors.Is(err, ErrBadSubject) {
				t.Fatalf("ParseSubject(%q) err = %v, want ErrBadSubject", tc.subj, err)
			}
		})
	}
}

func FuzzToken(f *testing.F) {
	for _, s := range []string{"10.0.0.1:8000", "meta-llama/Llama-3.1-8B", "", "%", "%41", "a.b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok := EncodeToken(s)
		if tok == "" || strings.ContainsAny(tok, ".*> \t\r\n") {
			t.Fatalf("EncodeToken(%q) = %q is not a valid NATS token", s, tok)
		}
		if back, err := DecodeToken(tok); err != nil || back != s {
			t.Fatalf("round trip of %q: %q, %v", s, back, err)
		}
		if dec, err := DecodeToken(s); err == nil && EncodeToken(dec) != s {
			t.Fatalf("DecodeToken(%q) = %q but it re-encodes to %q", s, dec, EncodeToken(dec))
		}
	})
}

func TestHeartbeatValidate(t *testing.T) {
	good := Heartbeat{Endpoint: "10.0.0.1:8000", Model: "m", Interval: Duration(time.Second)}
	tests := []struct {
		name    string
		mutate  func(*Heartbeat)
		wantErr string
	}{
		{"valid", func(*Heartbeat) {}, ""},
		{"bad endpoint", func(h *Heartbeat) { h.Endpoint = "host:80" }, "literal IP"},
		{"no model", func(h *Heartbeat) { h.Model = "" }, "model is required"},
		{"negative rank", func(h *Heartbeat) { h.DPRank = -1 }, "dpRank"},
		{"negative block size", func(h *Heartbeat) { h.BlockSize = -1 }, "blockSize"},
		{"no interval", func(h *Heartbeat) { h.Interval = 0 }, "interval"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := good
			tc.mutate(&h)
			err := h.Validate()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestHeartbeatJSON(t *testing.T) {
	seq := uint64(42)
	h := Heartbeat{Endpoint: "10.0.0.1:8000", Model: "m", Relay: "r1", Seq: &seq, EngineConnected: true,
		Interval: Duration(2 * time.Second), SentAt: time.Unix(100, 0).UTC(),
		Load: &EngineLoad{Running: 3, Waiting: 1, KVCacheUsage: 0.5, ScrapedAt: time.Unix(99, 0).UTC()}}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"endpoint":"10.0.0.1:8000","model":"m","dpRank":0,"relay":"r1","seq":42,"engineConnected":true,` +
		`"interval":"2s","sentAt":"1970-01-01T00:01:40Z","load":{"running":3,"waiting":1,"kvCacheUsage":0.5,"scrapedAt":"1970-01-01T00:01:39Z"}}`
	if string(b) != want {
		t.Fatalf("json = %s\nwant   %s", b, want)
	}
	var back Heartbeat
	if err := json.Unmarshal(b, &back); err != nil || *back.Seq != 42 || back.Load.Running != 3 {
		t.Fatalf("round trip = %+v, %v", back, err)
	}
}

func ExampleEventSubject() {
	subj, _ := EventSubject("meta-llama/Llama-3.1-8B", "10.0.0.1:8000")
	fmt.Println(subj)
	model, endpoint, _ := ParseSubject(EventSubjectPrefix, subj)
	fmt.Println(model, endpoint)
	// Output:
	// warmroute.kv.v1.meta-llama%2FLlama-3%2E1-8B.10%2E0%2E0%2E1%3A8000
	// meta-llama/Llama-3.1-8B 10.0.0.1:8000
}
