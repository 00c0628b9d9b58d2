package ttl

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

var negotiateTests = []struct {
	name, format, accept string
	want                 string
	bad                  bool
}{
	{"default is text", "", "", "text", false},
	{"curl", "", "*/*", "text", false},
	{"json accept", "", "application/json", "json", false},
	{"json first", "", "application/json, text/plain;q=0.5", "json", false},
	{"problem json", "", "application/problem+json", "json", false},
	{"browser", "", "text/html,application/xhtml+xml", "text", false},
	{"query wins", "json", "text/plain", "json", false},
	{"query text", "TEXT", "application/json", "text", false},
	{"bad query", "xml", "", "", true},
	{"garbage accept", "", ";;;,", "text", false},
}

func TestNegotiate(t *testing.T) {
	for _, tt := range negotiateTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := negotiate(tt.format, tt.accept)
			if tt.bad != (err != nil) || (err != nil && !errors.Is(err, ErrFormat)) || got != tt.want {
				t.Fatalf("negotiate(%q, %q) = %q, %v; want %q bad=%v", tt.format, tt.accept, got, err, tt.want, tt.bad)
			}
		})
	}
}

func FuzzNegotiate(f *testing.F) {
	for _, tt := range negotiateTests {
		f.Add(tt.format, tt.accept)
	}
	f.Fuzz(func(t *testing.T, format, accept string) {
		got, err := negotiate(format, accept)
		if err != nil {
			if !errors.Is(err, ErrFormat) || got != "" {
				t.Fatalf("error %v with %q", err, got)
			}
			return
		}
		if got != "json" && got != "text" {
			t.Fatalf("format %q", got)
		}
	})
}

func TestHandler(t *testing.T) {
	h := newHarness(t, Config{MinSamples: 10})
	h.feed(0, "10.0.0.1:8000", "llama", referenceLatencies())
	tests := []struct {
		name, method, target, accept string
		status                       int
		contentType                  string
		check                        func(t *testing.T, body string)
	}{
		{"json", http.MethodGet, "/debug/ttl?format=json", "", 200, "application/json", func(t *testing.T, body string) {
			var rep Report
			if err := json.Unmarshal([]byte(body), &rep); err != nil {
				t.Fatalf("decoding report: %v", err)
			}
			if len(rep.Rows) != 1 || rep.Rows[0].Endpoint != "10.0.0.1:8000" || rep.Overall.Advice.TTL.D() != 1250*time.Millisecond {
				t.Fatalf("report %+v", rep)
			}
		}},
		{"accept json", http.MethodGet, "/debug/ttl", "application/json", 200, "application/json", nil},
		{"text table", http.MethodGet, "/debug/ttl", "", 200, "text/plain; charset=utf-8", func(t *testing.T, body string) {
			for _, want := range []string{"mode static", "endpoint", "10.0.0.1:8000", "llama", "1.25s", "_all"} {
				if !strings.Contains(body, want) {
					t.Errorf("text report lacks %q:\n%s", want, body)
				}
			}
		}},
		{"bad format", http.MethodGet, "/debug/ttl?format=xml", "", 400, "text/plain; charset=utf-8", nil},
		{"post", http.MethodPost, "/debug/ttl", "", 405, "text/plain; charset=utf-8", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, tt.target, nil)
			if tt.accept != "" {
				req.Header.Set("Accept", tt.accept)
			}
			rec := httptest.NewRecorder()
			h.Handler().ServeHTTP(rec, req)
			if rec.Code != tt.status || rec.Header().Get("Content-Type") != tt.contentType {
				t.Fatalf("status %d %q, want %d %q: %s", rec.Code, rec.Header().Get("Content-Type"), tt.status, tt.contentType, rec.Body)
			}
			if tt.check != nil {
				tt.check(t, rec.Body.String())
			}
		})
	}
}

// TestReportJSONWithInfiniteSlack: a TTL below Lq makes the slack ratio
// infinite, which JSON cannot carry; the report says null.
func TestReportJSONWithInfiniteSlack(t *testing.T) {
	h := newHarness(t, Config{MinSamples: 1, Static: dur(500 * time.Millisecond)}, func(o *Options) { o.Backlog = backlog(time.Millisecond) })
	h.feed(0, "e", "m", []time.Duration{time.Second})
	h.step(h.clk.Now())
	b, err := json.Marshal(h.Report())
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	if !strings.Contains(string(b), `"backlogSlackRatio":null`) {
		t.Fatalf("want a null slack ratio in %s", b)
	}
}
