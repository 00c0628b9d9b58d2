package tests

import (
	"bufio"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
)

// dockerContext returns the files of the repository's working tree that a
// `docker build .` sends as its context, by the repository's .dockerignore
// read with Docker's own pattern matcher; .git and .cache must be excluded
// and are not walked.
func dockerContext(t *testing.T, root string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	patterns, err := ignorefile.ReadAll(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".git", ".git/HEAD", ".cache", ".cache/kube/x.go", "compare", "bin/warmroute", "README.md"} {
		if ok, err := pm.MatchesOrParentMatches(p); err != nil || !ok {
			t.Errorf(".dockerignore lets %s into the build context (err %v)", p, err)
		}
	}
	var files []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil || rel == "." {
			return err
		}
		if rel == ".git" || rel == ".cache" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil // excluded directories may hold re-included files
		}
		excluded, err := pm.MatchesOrParentMatches(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		if !excluded {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// The Docker build context holds only small sources (no built binary, no
// repository history or caches), and every package `go build
// ./cmd/warmroute` compiles, as the Dockerfile runs it, loads from exactly
// that context.
func TestDockerBuildContext(t *testing.T) {
	root := repoRoot(t)
	files := dockerContext(t, root)
	ctx := t.TempDir()
	var total int64
	for _, rel := range files {
		st, err := os.Lstat(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > 1<<20 {
			t.Errorf("%s (%d bytes) is in the build context", rel, st.Size())
		}
		total += st.Size()
		if !st.Mode().IsRegular() {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(ctx, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ctx, rel), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("build context: %d files, %d bytes", len(files), total)
	// Loading every package of the build (sources, embedded files, module
	// graph) fails on anything the context lacks, but a missing assembly
	// file or profile only shows when compiling, which would add minutes
	// (a -trimpath build in another directory shares no cache with the
	// other tests' builds). So every package's compiled files, for each
	// architecture with assembly, are listed in the repository and in the
	// context, and must be the same.
	for _, arch := range []string{"amd64", "arm64"} {
		want, got := buildFiles(t, root, arch), buildFiles(t, ctx, arch)
		if got != want {
			t.Errorf("GOARCH=%s: the build context lacks files the build compiles:\nrepository:\n%s\ncontext:\n%s", arch, want, got)
		}
	}
	// go build uses the main package's default.pgo (profile-guided
	// optimization) when it is there.
	if _, err := os.Stat(filepath.Join(root, "cmd/warmroute/default.pgo")); err == nil {
		if _, err := os.Stat(filepath.Join(ctx, "cmd/warmroute/default.pgo")); err != nil {
			t.Errorf("cmd/warmroute/default.pgo is not in the build context: %v", err)
		}
	}
}

// buildFiles lists, per package of the module that `go build
// ./cmd/warmroute` compiles for linux/arch, the files it compiles and
// embeds, as go list finds them in dir.
func buildFiles(t *testing.T, dir, arch string) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f",
		`{{if not .Standard}}{{if .Module}}{{if .Module.Main}}{{.ImportPath}}: {{join .GoFiles " "}} {{join .SFiles " "}} {{join .HFiles " "}} {{join .EmbedFiles " "}}{{end}}{{end}}{{end}}`,
		"./cmd/warmroute")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-trimpath -mod=readonly", "CGO_ENABLED=0", "GOWORK=off", "GOOS=linux", "GOARCH="+arch)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/warmroute in %s (GOARCH=%s): %v\n%s", dir, arch, err, out)
	}
	return strings.TrimSpace(string(out))
}

// The Dockerfile's base images are fully qualified (registry host named, as
// buildah and podman require) and can be pinned by digest through build
// arguments.
func TestDockerfileBaseImages(t *testing.T) {
	f, err := os.Open(filepath.Join(repoRoot(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	args := map[string]string{}
	argRE := regexp.MustCompile(`^ARG\s+(\w+)=(\S+)`)
	fromRE := regexp.MustCompile(`^FROM\s+(\S+)`)
	froms := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if m := argRE.FindStringSubmatch(line); m != nil {
			args[m[1]] = m[2]
		}
		m := fromRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		froms++
		ref := m[1]
		name, isArg := strings.CutPrefix(ref, "${")
		if !isArg {
			t.Errorf("FROM %s: not a build argument, so it cannot be pinned by digest without editing the file", ref)
			continue
		}
		img := args[strings.TrimSuffix(name, "}")]
		registry, _, ok := strings.Cut(img, "/")
		if !ok || !strings.ContainsAny(registry, ".:") {
			t.Errorf("FROM %s defaults to %q, which does not name its registry", ref, img)
		}
	}
	if froms != 2 {
		t.Errorf("found %d FROM lines, want the build and the runtime stage", froms)
	}
}
