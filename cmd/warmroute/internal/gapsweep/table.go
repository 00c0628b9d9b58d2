package gapsweep

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable writes r for people: the fixed settings, one row per pair and
// one summary row per gap.
func (r *Result) WriteTable(w io.Writer) error {
	r.writeHeader(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "gap\tlabel\t#\tfirst endpoint\tsecond endpoint\tbasis\tmatched\tuncached\tttft\tverdict")
	for i := range r.Pairs {
		writePair(tw, &r.Pairs[i])
	}
	fmt.Fprintln(tw, "\nsummary\t\tpairs\tspeculative\tconfirmed\tnone/load\tbad\tmean uncached\tmedian ttft\tverdicts")
	for i := range r.Summary {
		writeSummary(tw, &r.Summary[i])
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	if r.Stopped != "" {
		_, err := fmt.Fprintf(w, "\nstopped early: %s\n", r.Stopped)
		return err
	}
	return nil
}

func (r *Result) writeHeader(w io.Writer) {
	fmt.Fprintf(w, "target %s  model %s  lora %s  cache salt %s\n", r.Target, r.Model, orDash(r.LoRA), orDash(r.CacheSalt))
	fmt.Fprintf(w, "block size %d (%s)  prefix %d words  suffix %d words  first-request fault %s  pairs/gap %d\n",
		r.BlockSize, r.BlockSizeFrom, r.PrefixWords, r.SuffixWords, r.Fault, r.PairsPerGap)
	if t := r.Timing; t != nil {
		fmt.Fprintf(w, "router: confirmation p50 %s  p95 %s (%d samples)  TTL %s  grace %s\n",
			dur(t.P50.D()), dur(t.P95.D()), t.Samples, dur(t.TTL.D()), dur(t.Grace.D()))
	}
	fmt.Fprintln(w)
}

func writePair(w io.Writer, p *Pair) {
	s := &p.Second
	matched := "-"
	if d := s.Decision; d.Basis.Indexed() || d.Blocks > 0 {
		matched = fmt.Sprintf("%dc+%ds/%d", d.Confirmed, d.Speculative, d.Blocks)
	}
	fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", gapDur(p.GapD.D()), p.Gap, p.Index,
		endpointOf(&p.First), endpointOf(s), s.Decision.Basis, matched, intOrUnknown(p.Uncached),
		dur(s.TTFT.D()), p.Verdict)
}

func writeSummary(w io.Writer, s *GapSummary) {
	mean := "unknown"
	if s.MeanUncached != nil {
		mean = strconv.FormatFloat(*s.MeanUncached, 'f', 1, 64)
	}
	fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", gapDur(s.Gap.D()), s.Label, s.Pairs,
		s.Bases[BasisSpeculative], s.Bases[BasisConfirmed], s.Bases[BasisNone]+s.Bases[BasisLoad],
		s.Bad, mean, dur(s.MedianTTFT.D()), verdictList(s.Verdicts))
}

// endpointOf names where a request went, with the error when it failed.
func endpointOf(e *Exchange) string {
	ep := e.Decision.Endpoint
	if ep == "" {
		ep = orDash(e.ServedBy)
	}
	switch {
	case e.Cancelled:
		return ep + " (cancelled)"
	case e.Status != 0 && e.Status/100 != 2:
		return ep + " (" + strconv.Itoa(e.Status) + ")"
	case e.Err != "":
		return ep + " (error)"
	}
	return ep
}

func verdictList(m map[Verdict]int) string {
	parts := make([]string, 0, len(m))
	for v, n := range m {
		parts = append(parts, fmt.Sprintf("%d %s", n, v))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

func intOrUnknown(p *int) string {
	if p == nil {
		return "unknown"
	}
	return strconv.Itoa(*p)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func dur(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return d.Round(time.Millisecond).String()
}

// gapDur prints a gap, where zero (back to back) is a real value.
func gapDur(d time.Duration) string { return d.Round(time.Millisecond).String() }
