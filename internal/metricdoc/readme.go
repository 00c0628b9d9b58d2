package metricdoc

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Family is one metric family: its name, type and sorted variable label
// names, as registered or as documented.
type Family struct {
	Name   string
	Type   string
	Labels []string
	// Line is the README line that documents the family; 0 when registered.
	Line int
}

const (
	sectionHeading = "## Metrics"
	tableHeader    = "| name | type | labels | meaning |"
	tableRule      = "|---|---|---|---|"
)

var types = []string{"counter", "gauge", "histogram", "summary"}

// ReadREADME parses the "## Metrics" table of the README at path. It returns
// the documented families by name, or an error naming the first line that
// does not follow the format in the package doc.
func ReadREADME(path string) (map[string]Family, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening readme: %w", err)
	}
	defer f.Close()
	lines, err := readLines(f)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	fams, err := parseTable(lines)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	return fams, nil
}

func readLines(f *os.File) ([]string, error) {
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines, sc.Err()
}

// parseTable finds the section and parses its first table.
func parseTable(lines []string) (map[string]Family, error) {
	start := slices.Index(lines, sectionHeading)
	if start < 0 {
		return nil, fmt.Errorf("no %q section", sectionHeading)
	}
	i := start + 1
	for i < len(lines) && !strings.HasPrefix(lines[i], "|") {
		if strings.HasPrefix(lines[i], "## ") {
			break
		}
		i++
	}
	if i+1 >= len(lines) || strings.TrimSpace(lines[i]) != tableHeader || strings.TrimSpace(lines[i+1]) != tableRule {
		return nil, fmt.Errorf("line %d: want the table header %q then %q", i+1, tableHeader, tableRule)
	}
	fams := map[string]Family{}
	for i += 2; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
		fam, err := parseRow(lines[i])
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		fam.Line = i + 1
		if prev, ok := fams[fam.Name]; ok {
			return nil, fmt.Errorf("line %d: %s already documented on line %d", i+1, fam.Name, prev.Line)
		}
		fams[fam.Name] = fam
	}
	return fams, nil
}

// parseRow parses "| `name` | type | `a`, `b` | meaning |".
func parseRow(row string) (Family, error) {
	cells := strings.SplitN(strings.TrimPrefix(row, "|"), "|", 4)
	if len(cells) < 4 {
		return Family{}, fmt.Errorf("want 4 cells, got %d", len(cells))
	}
	name, ok := backticked(strings.TrimSpace(cells[0]))
	if !ok || name == "" {
		return Family{}, fmt.Errorf("name cell %q is not one name in backticks", cells[0])
	}
	typ := strings.TrimSpace(cells[1])
	if !slices.Contains(types, typ) {
		return Family{}, fmt.Errorf("%s: type %q is not one of %v", name, typ, types)
	}
	labels, err := parseLabels(cells[2])
	if err != nil {
		return Family{}, fmt.Errorf("%s: %w", name, err)
	}
	return Family{Name: name, Type: typ, Labels: labels}, nil
}

func parseLabels(cell string) ([]string, error) {
	cell = strings.TrimSpace(cell)
	if cell == "" {
		return nil, nil
	}
	var labels []string
	for _, part := range strings.Split(cell, ",") {
		l, ok := backticked(strings.TrimSpace(part))
		if !ok || l == "" {
			return nil, fmt.Errorf("label %q is not a name in backticks", strings.TrimSpace(part))
		}
		labels = append(labels, l)
	}
	slices.Sort(labels)
	return labels, nil
}

// backticked returns s without its enclosing backticks; ok is false when s
// is not exactly one backticked word.
func backticked(s string) (string, bool) {
	inner, ok := strings.CutPrefix(s, "`")
	if !ok {
		return "", false
	}
	inner, ok = strings.CutSuffix(inner, "`")
	if !ok || strings.ContainsAny(inner, "` ") {
		return "", false
	}
	return inner, true
}

// ReadREADMEs parses the metric table of every README.md under root that
// has a "## Metrics" section (skipping hidden directories, testdata and the
// directories named in skip) and returns the documented families with the
// README each came from. A family documented twice is an error.
func ReadREADMEs(root string, skip ...string) (map[string]Family, map[string]string, error) {
	fams, owner := map[string]Family{}, map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || slices.Contains(skip, d.Name())) {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != "README.md" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		if !slices.Contains(strings.Split(string(b), "\n"), sectionHeading) {
			return nil
		}
		got, err := ReadREADME(path)
		if err != nil {
			return err
		}
		for name, f := range got {
			if prev, ok := owner[name]; ok {
				return fmt.Errorf("%s is documented in both %s and %s", name, prev, path)
			}
			fams[name], owner[name] = f, path
		}
		return nil
	})
	return fams, owner, err
}
