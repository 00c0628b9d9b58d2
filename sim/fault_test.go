package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/internal/testwait"
)

const smallCompletion = `{"model":"sim-model","prompt":"hello","max_tokens":2}`

var errorTests = []struct {
	name     string
	opts     Options
	method   string
	path     string
	body     string
	headers  map[string]string
	status   int
	errType  string
	contains string
}{
	{"injected 500", Options{}, "POST", "/v1/completions", smallCompletion,
		map[string]string{statusHeader: "500"}, 500, api.ErrTypeInternal, "injected"},
	{"injected 503 on chat", Options{}, "POST", "/v1/chat/completions", `{}`,
		map[string]string{statusHeader: "503"}, 503, api.ErrTypeUnavailable, "injected"},
	{"injected 429", Options{}, "POST", "/v1/completions", smallCompletion,
		map[string]string{statusHeader: "429"}, 429, api.ErrTypeInvalidRequest, "injected"},
	{"injected status after delay", Options{}, "POST", "/v1/completions", smallCompletion,
		map[string]string{statusHeader: "502", delayHeader: "1ms"}, 502, api.ErrTypeInternal, "injected"},
	{"status header not a number", Options{}, "POST", "/v1/completions", smallCompletion,
		map[string]string{statusHeader: "oops"}, 400, api.ErrTypeInvalidRequest, statusHeader},
	{"status header not an error", Options{}, "POST", "/v1/completions", smallCompletion,
		map[string]string{statusHeader: "200"}, 400, api.ErrTypeInvalidRequest, statusHeader},
	{"delay header not a duration", Options{}, "POST", "/v1/completions", smallCompletion,
		map[string]string{delayHeader: "soon"}, 400, api.ErrTypeInvalidRequest, delayHeader},
	{"negative delay", Options{}, "POST", "/v1/completions", smallCompletion,
		map[string]string{delayHeader: "-1s"}, 400, api.ErrTypeInvalidRequest, delayHeader},
	{"malformed json", Options{}, "POST", "/v1/completions", `{"model":`, nil, 400, api.ErrTypeInvalidRequest, "malformed JSON"},
	{"missing model", Options{}, "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, nil,
		400, api.ErrTypeInvalidRequest, "model is required"},
	{"unknown model", Options{}, "POST", "/v1/completions", `{"model":"gpt-9","prompt":"x"}`, nil,
		404, api.ErrTypeNotFound, "gpt-9"},
	{"unknown chat model", Options{}, "POST", "/v1/chat/completions", `{"model":"gpt-9","messages":[{"role":"user","content":"x"}]}`, nil,
		404, api.ErrTypeNotFound, "gpt-9"},
	{"empty prompt", Options{}, "POST", "/v1/completions", `{"model":"sim-model","prompt":""}`, nil,
		400, api.ErrTypeInvalidRequest, "prompt is empty"},
	{"empty messages", Options{}, "POST", "/v1/chat/completions", `{"model":"sim-model","messages":[]}`, nil,
		400, api.ErrTypeInvalidRequest, "messages must not be empty"},
	{"prompt over context", Options{MaxModelLen: 4}, "POST", "/v1/completions", `{"model":"sim-model","prompt":[1,2,3],"max_tokens":2}`, nil,
		400, api.ErrTypeInvalidRequest, "context length"},
	{"body too large", Options{MaxBodyBytes: 16}, "POST", "/v1/completions", smallCompletion, nil,
		413, api.ErrTypeTooLarge, "too large"},
	{"wrong method", Options{}, "GET", "/v1/completions", "", nil, 405, api.ErrTypeInvalidRequest, "not allowed"},
	{"unknown path", Options{}, "POST", "/v2/nothing", "{}", nil, 404, api.ErrTypeNotFound, "no route"},
}

func TestErrorResponses(t *testing.T) {
	for _, tt := range errorTests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.ID = "sim-err"
			_, ts := startServer(t, tt.opts)
			req, _ := http.NewRequest(tt.method, ts.URL+tt.path, strings.NewReader(tt.body))
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, raw)
			}
			if got := resp.Header.Get(api.ServedByHeader); got != "sim-err" {
				t.Errorf("%s = %q on an error", api.ServedByHeader, got)
			}
			r := decodeResponse(t, raw)
			if r.Error == nil || r.Error.Code != tt.status || r.Error.Type != tt.errType || !strings.Contains(r.Error.Message, tt.contains) {
				t.Fatalf("error body %s; want code %d, type %q, message containing %q", raw, tt.status, tt.errType, tt.contains)
			}
		})
	}
}

func TestRequestOutcomesAreCounted(t *testing.T) {
	s, ts := startServer(t, Options{})
	for _, h := range []map[string]string{nil, {statusHeader: "500"}, {statusHeader: "bad"}} {
		post(t, ts.URL, "/v1/completions", smallCompletion, h).Body.Close()
	}
	post(t, ts.URL, "/v1/chat/completions", `{"model":"nope","messages":[{"role":"user","content":"x"}]}`, nil).Body.Close()
	for _, tt := range []struct{ api, outcome string }{
		{"completions", outcomeOK}, {"completions", outcomeInjectedFault},
		{"completions", outcomeBadRequest}, {"chat_completions", outcomeUnknownModel},
	} {
		if got := testutil.ToFloat64(s.metrics.requests.WithLabelValues(tt.api, tt.outcome)); got != 1 {
			t.Errorf("requests_total{api=%q,outcome=%q} = %v, want 1", tt.api, tt.outcome, got)
		}
	}
}

func TestDelayHeaderWaitsAndReturnsEarlyOnCancel(t *testing.T) {
	s, ts := startServer(t, Options{})
	resp := post(t, ts.URL, "/v1/completions", smallCompletion, map[string]string{delayHeader: "1ms"})
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("short delay: status %d", resp.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/v1/completions", strings.NewReader(smallCompletion))
	req.Header.Set(delayHeader, "1h")
	if _, err := http.DefaultClient.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want the client's deadline", err)
	}
	waitCounter(t, s, "completions", outcomeCancelled, 1)
}

func TestParseFault(t *testing.T) {
	tests := []struct {
		name    string
		delay   string
		status  string
		want    fault
		wantErr bool
	}{
		{"none", "", "", fault{}, false},
		{"delay", "250ms", "", fault{delay: 250 * time.Millisecond}, false},
		{"zero delay", "0s", "", fault{}, false},
		{"status", "", "503", fault{status: 503}, false},
		{"both", "2s", "400", fault{delay: 2 * time.Second, status: 400}, false},
		{"status too low", "", "399", fault{}, true},
		{"status too high", "", "600", fault{}, true},
		{"delay without unit", "5", "", fault{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.delay != "" {
				h.Set(delayHeader, tt.delay)
			}
			if tt.status != "" {
				h.Set(statusHeader, tt.status)
			}
			got, err := parseFault(h)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("parseFault = %+v, %v; want %+v, error %v", got, err, tt.want, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrBadFaultHeader) {
				t.Fatalf("error %v does not wrap ErrBadFaultHeader", err)
			}
		})
	}
}

// FuzzParseFault checks the header parser never panics and only yields
// statuses the handler can send.
func FuzzParseFault(f *testing.F) {
	f.Add("250ms", "503")
	f.Add("", "600")
	f.Add("-1s", "abc")
	f.Fuzz(func(t *testing.T, delay, status string) {
		h := http.Header{}
		h.Set(delayHeader, delay)
		h.Set(statusHeader, status)
		got, err := parseFault(h)
		if err == nil && (got.delay < 0 || (got.status != 0 && (got.status < 400 || got.status > 599))) {
			t.Fatalf("accepted %+v", got)
		}
	})
}

func waitCounter(t testing.TB, s *Server, apiName, outcome string, want float64) {
	t.Helper()
	testwait.Until(t, 5*time.Second, func() string {
		if got := testutil.ToFloat64(s.metrics.requests.WithLabelValues(apiName, outcome)); got != want {
			return fmt.Sprintf("requests_total{api=%q,outcome=%q} = %v, want %v", apiName, outcome, got, want)
		}
		return ""
	})
}
