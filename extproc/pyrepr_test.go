package extproc

import (
	"encoding/json/jsontext"
	"testing"
)

// TestPyReprJSON: Python's str() of what json.loads makes of each value
// (expected strings checked against CPython 3.11's repr).
func TestPyReprJSON(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`"plain"`, `'plain'`},
		{`"it's"`, `"it's"`},
		{`"it's \"q\""`, `'it\'s "q"'`},
		{`"a\\b\n\t\r"`, `'a\\b\n\t\r'`},
		{`"\u0000\u007f\u00a0\u200b\u2028é👍"`, `'\x00\x7f\xa0\u200b\u2028é👍'`},
		{`[1, -0, 123456789012345678901234567890]`, `[1, 0, 123456789012345678901234567890]`},
		{`[1.0, 1.5, 1e20, 1e16, 1e15, 1e-7, 0.0001, 0.0, -0.0, 1E400]`,
			`[1.0, 1.5, 1e+20, 1e+16, 1000000000000000.0, 1e-07, 0.0001, 0.0, -0.0, inf]`},
		{`{"t": true, "f": false, "n": null, "d": {}, "l": []}`, `{'t': True, 'f': False, 'n': None, 'd': {}, 'l': []}`},
	} {
		got, err := pyReprJSON(jsontext.Value(tt.in))
		if err != nil || got != tt.want {
			t.Errorf("pyReprJSON(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	if _, err := pyReprJSON(jsontext.Value(`[1,`)); err == nil {
		t.Error("truncated JSON accepted")
	}
}
