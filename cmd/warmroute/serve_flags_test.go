package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/router"
)

// maxSettings bounds the configuration file's leaf settings: every knob is
// one more thing an operator must understand. 59: pools[].endpoints[].role,
// the prefill/decode role of a static endpoint, which Kubernetes pools read
// from a pod label and static pools have nowhere else to say; and
// pools[].engine, because vLLM and SGLang tokenize the same chat request
// differently and the router cannot tell which engine a pool runs.
const maxSettings = 59

// entrySettings are settings inside list entries that take either a plain
// or an object form (a pool endpoint is "ip:port" or {address, role}); the
// Go field holding them is decoded by hand, so reflection cannot see them.
var entrySettings = map[string]string{"pools[].endpoints[].role": ""}

// notSettings are serve flags that configure the process, not the router.
var notSettings = []string{"config", "log-level", "log-format"}

// refRow is one row of the README's configuration reference.
type refRow struct {
	key, def string
	flags    []string
}

// readReference parses the table under "### Configuration reference" in
// the repository README: | `key` | `--flag` | `default` | meaning |.
func readReference(t *testing.T) map[string]refRow {
	t.Helper()
	f, err := os.Open("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string]refRow{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "#"):
			in = line == "### Configuration reference"
			continue
		case !in || !strings.HasPrefix(line, "| `"):
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 4 {
			t.Fatalf("reference row %q: want 4 cells", line)
		}
		r := refRow{key: unquote(cells[0]), def: unquote(cells[2])}
		for _, fl := range strings.Split(cells[1], ",") {
			if fl = strings.TrimPrefix(unquote(fl), "--"); fl != "" {
				r.flags = append(r.flags, strings.Fields(fl)[0])
			}
		}
		if _, dup := rows[r.key]; dup {
			t.Errorf("README reference lists %s twice", r.key)
		}
		rows[r.key] = r
	}
	if len(rows) == 0 {
		t.Fatal("README has no configuration reference table")
	}
	return rows
}

func unquote(cell string) string { return strings.Trim(strings.TrimSpace(cell), "`") }

// leaves returns the file schema's leaf settings as dotted JSON paths, with
// "[]" for list elements, and each one's value in v (zero v: only paths).
func leaves(v reflect.Value, prefix string, out map[string]string) {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		fv := v.Field(i)
		switch {
		case sf.Anonymous:
			leaves(fv, prefix, out)
		case name == "-" || !sf.IsExported():
		case sf.Type.Kind() == reflect.Struct:
			leaves(fv, prefix+name+".", out)
		case sf.Type.Kind() == reflect.Slice && sf.Type.Elem().Kind() == reflect.Struct:
			elems := map[string][]string{}
			for j := range max(fv.Len(), 1) {
				e := reflect.New(sf.Type.Elem()).Elem()
				if j < fv.Len() {
					e = fv.Index(j)
				}
				sub := map[string]string{}
				leaves(e, prefix+name+"[].", sub)
				for k, s := range sub {
					if s != "" || elems[k] == nil {
						elems[k] = append(elems[k], s)
					}
				}
			}
			for k, s := range elems {
				out[k] = strings.Join(s, ";")
			}
		default:
			out[prefix+name] = format(fv)
		}
	}
}

// format writes a setting's value as the reference's default column does.
func format(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case api.Duration:
		if x == 0 {
			return ""
		}
		return x.D().String()
	case *float64:
		if x == nil {
			return ""
		}
		return strconv.FormatFloat(*x, 'g', -1, 64)
	case []string:
		return strings.Join(x, ",")
	case string:
		return x
	}
	return fmt.Sprint(v.Interface())
}

func settingsOf(c router.Config) map[string]string {
	out := map[string]string{}
	leaves(reflect.ValueOf(c), "", out)
	maps.Copy(out, entrySettings)
	return out
}

// TestConfigReference: the README's reference lists every setting of the
// file schema exactly once with its default, and there are few of them.
func TestConfigReference(t *testing.T) {
	rows := readReference(t)
	defaults := settingsOf(router.Config{}.WithDefaults())
	if len(defaults) > maxSettings {
		t.Errorf("the file schema has %d settings, more than %d", len(defaults), maxSettings)
	}
	for key, def := range defaults {
		r, ok := rows[key]
		switch {
		case !ok:
			t.Errorf("setting %s is not in the README's configuration reference", key)
		case r.def != def:
			t.Errorf("README reference: %s defaults to %q, want %q", key, r.def, def)
		}
	}
	for key := range rows {
		if _, ok := defaults[key]; !ok {
			t.Errorf("README reference lists %s, which is not a setting", key)
		}
	}
}

// flagBase is what every wiring case starts from: one pool with a
// tokenizer, so the pool flags have something to change.
var flagBase = []string{"--endpoints", "m=10.0.0.1:8000", "--tokenizer", "m=/tok"}

// changedValue returns a value for fl that differs from its default.
func changedValue(t *testing.T, fl *flag.Flag) string {
	switch fl.Name {
	case "endpoints":
		return "n=10.0.0.2:1"
	case "tokenizer":
		return "m=/other"
	case "tokenizer-mode":
		return "drift"
	case "ttl-mode":
		return "adaptive"
	case "decision-header":
		return "client"
	}
	g, ok := fl.Value.(flag.Getter)
	if !ok {
		if _, weight := fl.Value.(weightFlag); weight {
			return "0.77"
		}
		t.Fatalf("flag --%s: no rule for a changed value of %T", fl.Name, fl.Value)
	}
	switch d := g.Get().(type) {
	case bool:
		return strconv.FormatBool(!d)
	case int:
		return strconv.Itoa(d + 7)
	case int64:
		return strconv.FormatInt(d+7, 10)
	case time.Duration:
		return (d + time.Millisecond).String()
	case *api.Duration:
		return (d.D() + time.Millisecond).String()
	case string:
		return d + "-changed"
	}
	t.Fatalf("flag --%s: no rule for a changed value of %T", fl.Name, g.Get())
	return ""
}

// TestEveryFlagIsWired gives each serve flag a value other than its
// default and checks that the configuration changes exactly in the
// settings the README says that flag sets. A flag bound to nothing, or to
// the wrong field, fails here.
func TestEveryFlagIsWired(t *testing.T) {
	rows := readReference(t)
	bySetting := map[string][]string{}
	documented := map[string]bool{}
	for key, r := range rows {
		bySetting[key] = r.flags
		for _, f := range r.flags {
			documented[f] = true
		}
	}
	settings := func(args []string) map[string]string {
		cfg, _, err := loadServeConfig(args, io.Discard)
		if err != nil {
			t.Fatalf("flags %q: %v", args, err)
		}
		return settingsOf(cfg.WithDefaults())
	}
	base := settings(flagBase)
	fs, _ := newServeFlagSet(io.Discard, new(router.Config))
	n := 0
	fs.VisitAll(func(fl *flag.Flag) {
		if slices.Contains(notSettings, fl.Name) {
			return
		}
		n++
		if !documented[fl.Name] {
			t.Errorf("flag --%s is not in the README's configuration reference", fl.Name)
		}
		t.Run(fl.Name, func(t *testing.T) {
			got := settings(append(slices.Clone(flagBase), "--"+fl.Name+"="+changedValue(t, fl)))
			var changed []string
			for key, v := range got {
				if base[key] != v {
					changed = append(changed, key)
					if !slices.Contains(bySetting[key], fl.Name) {
						t.Errorf("--%s changed %s (%q -> %q), which the README does not list for it", fl.Name, key, base[key], v)
					}
				}
			}
			if len(changed) == 0 {
				t.Errorf("--%s changed no setting: it is not wired", fl.Name)
			}
		})
	})
	for f := range documented {
		if fs.Lookup(f) == nil {
			t.Errorf("README reference names --%s, which serve does not have", f)
		}
	}
	t.Logf("%d setting flags, %d settings", n, len(settingsOf(router.Config{})))
}
