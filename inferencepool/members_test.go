package inferencepool

import (
	"encoding/json"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var specCases = []struct {
	name string
	spec string
	ok   bool
}{
	{"selector and port", `{"selector":{"matchLabels":{"app":"vllm"}},"targetPorts":[{"number":8000}]}`, true},
	{"no selector", `{"targetPorts":[{"number":8000}]}`, false},
	{"empty selector", `{"selector":{"matchLabels":{}},"targetPorts":[{"number":8000}]}`, false},
	{"no ports", `{"selector":{"matchLabels":{"app":"vllm"}}}`, false},
	{"port zero", `{"selector":{"matchLabels":{"app":"vllm"}},"targetPorts":[{"number":0}]}`, false},
	{"port too big", `{"selector":{"matchLabels":{"app":"vllm"}},"targetPorts":[{"number":70000}]}`, false},
	{"port not a number", `{"selector":{"matchLabels":{"app":"vllm"}},"targetPorts":[{"number":"8000"}]}`, false},
	{"port not an object", `{"selector":{"matchLabels":{"app":"vllm"}},"targetPorts":[8000]}`, false},
	{"label value not a string", `{"selector":{"matchLabels":{"app":1}},"targetPorts":[{"number":8000}]}`, false},
}

func decodeSpec(t testing.TB, raw string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(`{"apiVersion":"inference.networking.k8s.io/v1","kind":"InferencePool","metadata":{"name":"p"},"spec":` + raw + `}`)); err != nil {
		t.Skip(err)
	}
	return u
}

func TestParseSpec(t *testing.T) {
	for _, tc := range specCases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseSpec(decodeSpec(t, tc.spec))
			if (err == nil) != tc.ok {
				t.Fatalf("parseSpec = %v, want ok %v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrSpec) {
				t.Errorf("error %v is not ErrSpec", err)
			}
			if tc.ok && (len(s.ports) != 1 || s.ports[0] != 8000 || s.selector.String() != "app=vllm") {
				t.Errorf("spec = %v %v", s.selector, s.ports)
			}
		})
	}
}

// FuzzParseSpec: any spec either parses into ports in range and a
// non-empty selector, or fails with ErrSpec; never a panic.
func FuzzParseSpec(f *testing.F) {
	for _, tc := range specCases {
		f.Add(tc.spec)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) {
			return
		}
		s, err := parseSpec(decodeSpec(t, raw))
		if err != nil {
			if !errors.Is(err, ErrSpec) {
				t.Fatalf("error %v is not ErrSpec", err)
			}
			return
		}
		if s.selector.Empty() || len(s.ports) == 0 {
			t.Fatalf("accepted an empty selector or no ports: %v %v", s.selector, s.ports)
		}
		for _, p := range s.ports {
			if p < 1 || p > 65535 {
				t.Fatalf("accepted port %d", p)
			}
		}
		s.members([]*corev1.Pod{pod("a", "192.0.2.1", vllm, podState{ready: true})})
	})
}

func TestMembersIPv6AndDuplicates(t *testing.T) {
	s, err := parseSpec(decodeSpec(t, `{"selector":{"matchLabels":{"app":"vllm"}},"targetPorts":[{"number":8000},{"number":8000}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := s.members([]*corev1.Pod{pod("a", "2001:db8::1", vllm, podState{ready: true})})
	if len(got) != 1 || got[0] != "[2001:db8::1]:8000" {
		t.Errorf("members %v, want [[2001:db8::1]:8000]", got)
	}
}
