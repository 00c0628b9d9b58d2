package api

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"
)

var t0 = time.Unix(1_700_000_000, 123)

func validPrediction() PredictionMessage {
	return PredictionMessage{Replica: "router-a-1f2e", Endpoint: "10.0.0.1:8000", Model: "meta-llama/Llama-3.1-8B",
		Decision: 0xdead_beef_0000_0001, DecidedAt: t0, ExpiresAt: t0.Add(2 * time.Second), Keys: []uint64{1, 2, 1 << 63}}
}

func predictionCases() []struct {
	name string
	m    PredictionMessage
} {
	noKeys := validPrediction()
	noKeys.Keys, noKeys.Model = nil, ""
	ipv6 := validPrediction()
	ipv6.Endpoint, ipv6.Decision = "[fd00::1]:8000", 0
	many := validPrediction()
	many.Keys = make([]uint64, 4096)
	for i := range many.Keys {
		many.Keys[i] = uint64(i) * 0x9e37_79b9_7f4a_7c15
	}
	return []struct {
		name string
		m    PredictionMessage
	}{{"typical", validPrediction()}, {"no keys and no model", noKeys}, {"ipv6 endpoint", ipv6}, {"4096 keys", many}}
}

func TestPredictionRoundTrip(t *testing.T) {
	for _, tc := range predictionCases() {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.m.AppendBinary(nil)
			if err != nil {
				t.Fatal(err)
			}
			got := PredictionMessage{Keys: make([]uint64, 0, 1)}
			if err := got.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
			if !samePrediction(got, tc.m) {
				t.Fatalf("round trip = %+v, want %+v", got, tc.m)
			}
		})
	}
}

func samePrediction(a, b PredictionMessage) bool {
	return a.Replica == b.Replica && a.Endpoint == b.Endpoint && a.Model == b.Model && a.Decision == b.Decision &&
		a.DecidedAt.Equal(b.DecidedAt) && a.ExpiresAt.Equal(b.ExpiresAt) && slices.Equal(a.Keys, b.Keys)
}

func TestPredictionEncodeRejects(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*PredictionMessage)
	}{
		{"no replica", func(m *PredictionMessage) { m.Replica = "" }},
		{"no endpoint", func(m *PredictionMessage) { m.Endpoint = "" }},
		{"expiry at decision", func(m *PredictionMessage) { m.ExpiresAt = m.DecidedAt }},
		{"expiry before decision", func(m *PredictionMessage) { m.ExpiresAt = m.DecidedAt.Add(-time.Second) }},
		{"long model", func(m *PredictionMessage) { m.Model = string(make([]byte, MaxPredictionString+1)) }},
		{"too many keys", func(m *PredictionMessage) { m.Keys = make([]uint64, MaxPredictionKeys+1) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := validPrediction()
			tt.mutate(&m)
			if _, err := m.AppendBinary(nil); !errors.Is(err, ErrBadPrediction) {
				t.Fatalf("err = %v, want ErrBadPrediction", err)
			}
		})
	}
}

// malformedPredictions are wire messages a decoder must reject.
func malformedPredictions(t testing.TB) map[string][]byte {
	m := validPrediction()
	good, err := m.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	badVersion := bytes.Clone(good)
	badVersion[0] = 2
	hugeCount := append(bytes.Clone(good[:len(good)-8*len(m.Keys)-1]), binary.AppendUvarint(nil, MaxPredictionKeys+1)...)
	longString := append([]byte{predictionVersion}, binary.AppendUvarint(nil, MaxPredictionString+1)...)
	expired := m
	expired.ExpiresAt = expired.DecidedAt.Add(time.Nanosecond)
	inverted, _ := expired.AppendBinary(nil)
	// Rewrite expiresAt to one nanosecond before decidedAt.
	off := len(inverted) - 8*len(m.Keys) - 1 - 8
	binary.BigEndian.PutUint64(inverted[off:], uint64(t0.UnixNano()-1))
	return map[string][]byte{
		"empty":              nil,
		"version only":       {predictionVersion},
		"unknown version":    badVersion,
		"truncated keys":     good[:len(good)-3],
		"trailing byte":      append(bytes.Clone(good), 0),
		"key count huge":     hugeCount,
		"string too long":    longString,
		"bad varint":         {predictionVersion, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		"expiry inverted":    inverted,
		"empty replica":      append([]byte{predictionVersion, 0}, good[1+1+len(m.Replica):]...),
		"truncated header":   good[:20],
		"non-minimal length": append([]byte{predictionVersion, 0x80, 0x00}, good[1:]...),
	}
}

func TestPredictionDecodeRejects(t *testing.T) {
	for name, b := range malformedPredictions(t) {
		t.Run(name, func(t *testing.T) {
			var m PredictionMessage
			if err := m.UnmarshalBinary(b); !errors.Is(err, ErrBadPrediction) {
				t.Fatalf("err = %v, want ErrBadPrediction", err)
			}
		})
	}
}

func FuzzPredictionDecode(f *testing.F) {
	for _, tc := range predictionCases() {
		b, _ := tc.m.AppendBinary(nil)
		f.Add(b)
	}
	for _, b := range malformedPredictions(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m PredictionMessage
		if err := m.UnmarshalBinary(b); err != nil {
			if !errors.Is(err, ErrBadPrediction) {
				t.Fatalf("error %v does not wrap ErrBadPrediction", err)
			}
			return
		}
		again, err := m.AppendBinary(nil)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("accepted message does not re-encode identically: %v", err)
		}
	})
}

func TestPredictionSubjects(t *testing.T) {
	tests := []struct {
		name, model, replica, want string
	}{
		{"plain", "qwen", "r1", "warmroute.spec.v1.qwen.r1"},
		{"encoded", "meta-llama/Llama-3.1", "pod.a", "warmroute.spec.v1.meta-llama%2FLlama-3%2E1.pod%2Ea"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PredictionSubject(tt.model, tt.replica)
			if err != nil || got != tt.want {
				t.Fatalf("PredictionSubject = %q, %v; want %q", got, err, tt.want)
			}
			model, replica, err := ParseSubject(PredictionSubjectPrefix, got)
			if err != nil || model != tt.model || replica != tt.replica {
				t.Fatalf("ParseSubject = %q, %q, %v", model, replica, err)
			}
		})
	}
	for _, bad := range [][2]string{{"", "r"}, {"m", ""}} {
		if _, err := PredictionSubject(bad[0], bad[1]); !errors.Is(err, ErrBadSubject) {
			t.Errorf("PredictionSubject(%q, %q) err = %v, want ErrBadSubject", bad[0], bad[1], err)
		}
	}
	if got := PredictionWildcard(""); got != "warmroute.spec.v1.*.*" {
		t.Errorf("PredictionWildcard(\"\") = %q", got)
	}
	if got := PredictionWildcard("a.b"); got != "warmroute.spec.v1.a%2Eb.*" {
		t.Errorf("PredictionWildcard(a.b) = %q", got)
	}
}

func BenchmarkPredictionEncode(b *testing.B) {
	for _, n := range []int{16, 256, 4096} {
		m := validPrediction()
		m.Keys = make([]uint64, n)
		b.Run(strconv.Itoa(n)+"keys", func(b *testing.B) {
			buf := make([]byte, 0, 64+8*n)
			b.ReportAllocs()
			for b.Loop() {
				buf, _ = m.AppendBinary(buf[:0])
			}
		})
	}
}
