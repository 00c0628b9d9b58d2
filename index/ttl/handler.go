package ttl

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"
)

// Handler serves the Report: JSON for ?format=json or an Accept header
// preferring application/json, otherwise (and for ?format=text) a text
// table for people. Only GET and HEAD are allowed.
func (c *Controller) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		format, err := negotiate(r.URL.Query().Get("format"), r.Header.Get("Accept"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rep := c.Report()
		w.Header().Set("Cache-Control", "no-store")
		if format == "json" {
			w.Header().Set("Content-Type", "application/json")
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			_ = enc.Encode(rep) // a write error means the client left
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_ = rep.WriteText(w)
	})
}

// negotiate picks "json" or "text". An explicit format wins; otherwise the
// first Accept media range that names JSON or text decides, and anything
// else (curl's */*, a browser's text/html) gets text.
func negotiate(format, accept string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(format)) {
	case "json":
		return "json", nil
	case "text", "txt", "table":
		return "text", nil
	case "":
	default:
		return "", fmt.Errorf("choosing report format %q: want json or text: %w", format, ErrFormat)
	}
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch {
		case mt == "application/json" || strings.HasSuffix(mt, "+json"):
			return "json", nil
		case strings.HasPrefix(mt, "text/"):
			return "text", nil
		}
	}
	return "text", nil
}

// WriteText writes the report as an aligned table, one row per series.
func (rep *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "mode %s  percentile %s  static %s  maxStale %s  window %s  minSamples %d  backlog peak %s  decisions %d\n\n",
		rep.Mode, rep.Percentile, rep.Static.D(), rep.MaxStale.D(), rep.Window.D(), rep.MinSamples, rep.Backlog.D(), rep.Decisions)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "endpoint\tmodel\tstate\tcurrent\tadvised\tLq\tsamples\tp50\tp95\tp99\tmax\t"+
		"trust\tconfirmed\tearly\tstale\tdropped\trate/s\tp(fail)\texposure\texp.tokens\tadv.exposure\t")
	for _, r := range append([]Row{rep.Overall}, rep.Rows...) {
		writeRow(tw, &r)
	}
	return tw.Flush()
}

func writeRow(w io.Writer, r *Row) {
	a := &r.Advice
	advised := "-"
	if a.Ready {
		advised = fmtDur(a.TTL.D())
		if a.Capped {
			advised += "(cap)"
		}
	}
	state := "ok"
	if r.Paused {
		state = "paused:" + r.PauseReason
	}
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%.3f\t%d\t%d\t%d\t%d\t%.2f\t%.4f\t%.3f\t%.0f\t%.3f\t\n",
		r.Endpoint, r.Model, state, fmtDur(r.Current.D()), advised, fmtDur(a.Quantile.D()), a.Samples,
		fmtDur(a.P50.D()), fmtDur(a.P95.D()), fmtDur(a.P99.D()), fmtDur(a.Max.D()), r.Trust,
		r.Endings.Confirmed, r.Endings.EarlyExpiry, r.Endings.StaleExpiry, r.Endings.Dropped,
		r.Exposure.Rate, r.Exposure.FailureProbability, r.Exposure.Requests, r.Exposure.Tokens,
		r.AdvisedExposure.Requests)
}

func fmtDur(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return d.Round(time.Millisecond).String()
}
