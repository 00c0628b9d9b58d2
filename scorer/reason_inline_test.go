package scorer

import (
	"strings"
	"testing"
)

// TestSetReason checks that a reason keeps its text whether it fits the
// Decision's inline buffer or not, and that a later reuse of the builder's
// bytes does not change it.
func TestSetReason(t *testing.T) {
	tests := []struct {
		name string
		text string
	}{
		{"empty", ""},
		{"short", "basis=load; tokenizer=none"},
		{"exactly inline", strings.Repeat("r", reasonInline)},
		{"longer than inline", strings.Repeat("x", reasonInline+1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d Decision
			b := []byte(tt.text)
			d.setReason(b)
			for i := range b {
				b[i] = '!' // the builder's buffer is reused by the next decision
			}
			if d.Reason != tt.text {
				t.Fatalf("Reason = %q, want %q", d.Reason, tt.text)
			}
		})
	}
}
