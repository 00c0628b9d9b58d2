package extproc

import (
	"encoding/json/jsontext"
	"testing"
)

func TestPythonDumps(t *testing.T) {
	for in, want := range map[string]string{
		`{"city":"Paris"}`:                `{"city": "Paris"}`,
		"{\n \"a\" : [1,2.0, null,true]}": `{"a": [1, 2.0, null, true]}`,
		`{"é":"日本 👍"}`:                    `{"\u00e9": "\u65e5\u672c \ud83d\udc4d"}`,
		`{"q":"a\"b\\c\n\u0001"}`:         `{"q": "a\"b\\c\n\u0001"}`,
		`{"f":[1e-7,1e16,1e15,0.0001,0.00001,-0,-0.0,123456789012345678901234567890]}`: `{"f": [1e-07, 1e+16, 1000000000000000.0, 0.0001, 1e-05, 0, -0.0, 123456789012345678901234567890]}`,
		`{"a":1,"b":2,"a":3}`: `{"a": 3, "b": 2}`,
		`{}`:                  `{}`,
	} {
		got, err := pythonDumps(jsontext.Value(in))
		if err != nil || got != want {
			t.Errorf("pythonDumps(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := pythonDumps(jsontext.Value(`{"a":1} x`)); err == nil {
		t.Error("trailing data accepted")
	}
}
