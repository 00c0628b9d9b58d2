package metricdoc

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// Check fails tb unless the families that register registers on a fresh
// registry are exactly those documented in the README at readme: it reports
// every registered metric missing from the README, every README row that is
// not registered, and every type or label mismatch. types are as for
// Registered.
func Check(tb testing.TB, readme string, register func(prometheus.Registerer) error, types ...map[string]string) {
	tb.Helper()
	doc, err := ReadREADME(readme)
	if err != nil {
		tb.Errorf("metricdoc: %v", err)
		return
	}
	got, err := Registered(register, types...)
	if err != nil {
		tb.Errorf("metricdoc: %v", err)
		return
	}
	for _, p := range Diff(got, doc) {
		tb.Errorf("metricdoc: %s: %s", readme, p)
	}
}

// Diff lists, sorted by name, how the registered families differ from the
// documented ones.
func Diff(registered, documented map[string]Family) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(registered)) {
		r := registered[name]
		d, ok := documented[name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s (%s%s) is registered but missing from the README", name, r.Type, labelSuffix(r.Labels)))
		case d.Type != r.Type:
			out = append(out, fmt.Sprintf("%s: README line %d says %s, registered as %s", name, d.Line, d.Type, r.Type))
		}
		if ok && !slices.Equal(d.Labels, r.Labels) {
			out = append(out, fmt.Sprintf("%s: README line %d lists labels %v, registered with %v", name, d.Line, d.Labels, r.Labels))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(documented)) {
		if _, ok := registered[name]; !ok {
			out = append(out, fmt.Sprintf("%s: README line %d documents a metric that is not registered", name, documented[name].Line))
		}
	}
	return out
}

func labelSuffix(labels []string) string {
	if len(labels) == 0 {
		return ""
	}
	return "{" + strings.Join(labels, ",") + "}"
}
