package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/internal/testwait"
)

// The fault matrix: every fault runs against real processes (simulators or
// the vLLM-exact python engine, relays, NATS, the router, and Envoy where
// requests are sent) and is judged three ways, by looking up the engines'
// true chains through the router's debug lookup:
//   - the index equals each engine's true block set within two heartbeat
//     intervals of the fault clearing (the router hearing the recovered
//     part again);
//   - no request goes to an endpoint once the router knew it dead, and the
//     router knew within one heartbeat interval (its own log time against
//     the time of the kill);
//   - every divergence moves a counter.
// Each case records detection time, convergence time and failed requests;
// TestFaults logs one "FAULT ..." line per case and, with
// $WARMROUTE_FAULTS_TABLE set, writes the table there (make faults).

// faultHeartbeat is the relays' heartbeat interval in the matrix.
const faultHeartbeat = harness.DefaultRelayHeartbeat

// faultSlack is added to every detection and convergence bound: on a loaded
// machine (CI shares two cores with load averages near 30) the processes of
// a case can wait that long for a core, which says nothing about warmroute
// (a kill -9 was once seen by the relay 320 ms after the signal). The table
// records the measured figures; a figure over the nominal bound is logged.
const faultSlack = faultHeartbeat

// faultRow is one line of the fault table.
type faultRow struct {
	fault       string
	detection   time.Duration // -1: nothing to detect
	convergence time.Duration // -1: not measured (skipped)
	failed      int           // requests that did not succeed
	requests    int
	note        string
}

var faultTable struct {
	sync.Mutex
	rows []faultRow
}

// faultCase is one fault of the matrix.
type faultCase struct {
	name string
	run  func(t *testing.T, f *faultRun)
}

// faultCases is filled by the faults_*_test.go files' init functions.
var faultCases []faultCase

func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault matrix starts many processes")
	}
	t.Cleanup(func() { writeFaultTable(t) })
	// The cases mostly wait (outages, expiry, process start-up), so more
	// run at once than -parallel's CPU count would allow.
	slots := make(chan struct{}, faultParallel())
	var wg sync.WaitGroup
	for _, c := range faultCases {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			t.Run(c.name, func(t *testing.T) {
				f := &faultRun{t: t, row: faultRow{fault: c.name, detection: -1, convergence: -1}}
				t.Cleanup(f.record)
				c.run(t, f)
			})
		})
	}
	wg.Wait()
}

// faultParallel is how many cases run at once: $WARMROUTE_FAULTS_PARALLEL,
// default 4.
func faultParallel() int {
	if n, err := strconv.Atoi(os.Getenv("WARMROUTE_FAULTS_PARALLEL")); err == nil && n > 0 {
		return n
	}
	return 4
}

// faultRun measures one case.
type faultRun struct {
	t   *testing.T
	row faultRow
}

func (f *faultRun) record() {
	r := f.row
	if f.t.Skipped() {
		r.note = "skipped: " + strings.TrimSpace(r.note)
	}
	f.t.Logf("FAULT fault=%q detection_ms=%d convergence_ms=%d failed=%d requests=%d skipped=%t",
		r.fault, ms(r.detection), ms(r.convergence), r.failed, r.requests, f.t.Skipped())
	faultTable.Lock()
	faultTable.rows = append(faultTable.rows, r)
	faultTable.Unlock()
}

func ms(d time.Duration) int64 {
	if d < 0 {
		return -1
	}
	return d.Milliseconds()
}

// detected waits (generously) for the router's own log line saying
// endpoint went down for reason after the fault at, records the delay as
// the detection time and fails when it exceeds limit.
func (f *faultRun) detected(r *harness.Router, endpoint, reason string, at time.Time, limit time.Duration) time.Time {
	f.t.Helper()
	return f.detectedLog(r.LogPath(), "endpoint down", map[string]string{"endpoint": endpoint, "reason": reason}, at, limit)
}

// detectedLog is detected for any JSON log line.
func (f *faultRun) detectedLog(path, msg string, attrs map[string]string, at time.Time, limit time.Duration) time.Time {
	f.t.Helper()
	var when time.Time
	testwait.Until(f.t, 30*time.Second, func() string {
		t, ok, err := harness.FirstLogAfter(path, msg, attrs, at)
		if err != nil {
			return err.Error()
		}
		if !ok {
			return fmt.Sprintf("no %q %v in %s since the fault", msg, attrs, path)
		}
		when = t
		return ""
	})
	f.row.detection = when.Sub(at)
	f.t.Logf("detected %v after the fault (%s %v)", f.row.detection.Round(time.Millisecond), msg, attrs)
	switch {
	case f.row.detection > limit+faultSlack:
		f.t.Errorf("detection took %v, want at most %v (+%v slack for a loaded machine)", f.row.detection.Round(time.Millisecond), limit, faultSlack)
	case f.row.detection > limit:
		f.t.Logf("detection took %v, over the nominal %v but inside the slack for a loaded machine", f.row.detection.Round(time.Millisecond), limit)
	}
	return when
}

// converged polls check until it reports no divergence, records the time
// from clear (when the router heard the recovered part again) as the
// convergence time and fails when that exceeds two heartbeat intervals
// (plus faultSlack).
func (f *faultRun) converged(clear time.Time, when string, check func() string) {
	f.t.Helper()
	var at time.Time
	testwait.Until(f.t, 30*time.Second, func() string {
		start := time.Now()
		if why := check(); why != "" {
			return when + ": " + why
		}
		at = start
		return ""
	})
	d := at.Sub(clear)
	if d < 0 {
		d = 0
	}
	f.row.convergence = max(f.row.convergence, d) // the slowest recovery of the case
	f.t.Logf("converged %v after the fault cleared (%s)", d.Round(time.Millisecond), when)
	switch {
	case d > 2*faultHeartbeat+faultSlack:
		f.t.Errorf("%s: the index equalled the truth %v after the fault cleared, want at most two heartbeat intervals (%v, +%v slack for a loaded machine)",
			when, d.Round(time.Millisecond), 2*faultHeartbeat, faultSlack)
	case d > 2*faultHeartbeat:
		f.t.Logf("%s: converged %v after the fault cleared, over the nominal %v but inside the slack for a loaded machine",
			when, d.Round(time.Millisecond), 2*faultHeartbeat)
	}
}

// settle waits until check reports no divergence, without a bound: for
// the state before a fault.
func (f *faultRun) settle(when string, check func() string) {
	f.t.Helper()
	testwait.Until(f.t, 30*time.Second, func() string {
		if why := check(); why != "" {
			return when + ": " + why
		}
		return ""
	})
}

// counter reads the sum of a router (or relay) metric at url.
func counter(t *testing.T, url, name string, labels map[string]string) float64 {
	t.Helper()
	m, err := harness.Scrape(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	return m.Sum(name, labels)
}

// wantCounter fails t unless the metric moved by at least min since before.
func wantCounter(t *testing.T, url, name string, labels map[string]string, before, min float64) {
	t.Helper()
	testwait.Until(t, 10*time.Second, func() string {
		if v := counter(t, url, name, labels); v-before < min {
			return fmt.Sprintf("%s%v moved by %v, want at least %v", name, labels, v-before, min)
		}
		return ""
	})
}

func writeFaultTable(t *testing.T) {
	faultTable.Lock()
	rows := slices.Clone(faultTable.rows)
	faultTable.Unlock()
	if len(rows) == 0 {
		return
	}
	slices.SortFunc(rows, func(a, b faultRow) int { return strings.Compare(a.fault, b.fault) })
	var b strings.Builder
	b.WriteString("| fault | detection | convergence | failed requests | note |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %d of %d | %s |\n", r.fault, cell(r.detection), cell(r.convergence),
			r.failed, r.requests, r.note)
	}
	t.Log("fault table:\n" + b.String())
	if p := os.Getenv("WARMROUTE_FAULTS_TABLE"); p != "" {
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
}

func cell(d time.Duration) string {
	if d < 0 {
		return "—"
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}

// traffic sends completions through Envoy from a small set of prompts until
// stopped, recording each request's start, outcome and endpoint.
type traffic struct {
	ps      *harness.PrefixStack
	prompts []string
	stop    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	sent    []sentRequest
}

type sentRequest struct {
	at     time.Time
	status int
	simID  string
	err    error
}

func startTraffic(ps *harness.PrefixStack, prompts []string, workers int) *traffic {
	tr := &traffic{ps: ps, prompts: prompts, stop: make(chan struct{})}
	for w := range workers {
		tr.wg.Go(func() {
			for i := w; ; i += workers {
				select {
				case <-tr.stop:
					return
				default:
				}
				tr.one(prompts[i%len(prompts)])
				time.Sleep(20 * time.Millisecond) // a steady trickle, not a flood
			}
		})
	}
	return tr
}

func (tr *traffic) one(prompt string) {
	at := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	body := fmt.Appendf(nil, `{"model":%q,"prompt":%q,"max_tokens":4}`, model, prompt)
	r, err := do(ctx, http.MethodPost, tr.ps.URL("/v1/completions"), body, nil)
	s := sentRequest{at: at, status: r.status, err: err}
	if r.header != nil {
		s.simID = r.header.Get("x-warmroute-served-by")
	}
	tr.mu.Lock()
	tr.sent = append(tr.sent, s)
	tr.mu.Unlock()
}

// finish stops the traffic, records the failures in f's row and returns
// what was sent.
func (tr *traffic) finish(f *faultRun) []sentRequest {
	close(tr.stop)
	tr.wg.Wait()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, s := range tr.sent {
		f.row.requests++
		if s.err != nil || s.status != http.StatusOK {
			f.row.failed++
		}
	}
	return slices.Clone(tr.sent)
}

// noneAfter fails t when a request started after detected went to victim
// or failed.
func noneAfter(t *testing.T, sent []sentRequest, detected time.Time, victim string) {
	t.Helper()
	after := 0
	for _, s := range sent {
		if !s.at.After(detected) {
			continue
		}
		after++
		if s.err != nil || s.status != http.StatusOK || s.simID == victim {
			t.Errorf("request started %v after detection: status %d, err %v, served by %q (victim %s)",
				s.at.Sub(detected).Round(time.Millisecond), s.status, s.err, s.simID, victim)
		}
	}
	if after == 0 {
		t.Errorf("no request started after detection; the case checks nothing")
	}
}
