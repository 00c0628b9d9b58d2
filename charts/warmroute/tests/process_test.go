package tests

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/warmroute/warmroute/e2e/harness"
)

// built is the warmroute binary, compiled once for every process test.
var built struct {
	once sync.Once
	path string
	err  error
}

// buildWarmroute compiles the repository's binary once per test run.
func buildWarmroute(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "warmroute-chart-test")
		if err != nil {
			built.err = err
			return
		}
		built.path = filepath.Join(dir, "warmroute")
		cmd := exec.Command("go", "build", "-o", built.path, "./cmd/warmroute")
		cmd.Dir = repoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("building warmroute: %w\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// TestMain removes the binary built for the process tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.path != "" {
		os.RemoveAll(filepath.Dir(built.path))
	}
	os.Exit(code)
}

// freePorts returns n distinct loopback ports that were free a moment ago,
// drawn below the kernel's ephemeral range (harness.FreePorts): a port found
// free inside that range is often taken by another test's outgoing
// connection before the process under test binds it.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports, err := harness.FreePorts(n)
	if err != nil {
		t.Fatal(err)
	}
	return ports
}

// container returns the named container of a rendered Deployment.
func container(t *testing.T, docs []doc, deployment, name string) corev1.Container {
	t.Helper()
	dep := decodeInto[appsv1.Deployment](t, find(t, docs, "Deployment", deployment))
	for _, c := range dep.Spec.Template.Spec.Containers {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("Deployment %s has no container %s", deployment, name)
	return corev1.Container{}
}

// podFS stands in for the pod's filesystem and downward API: mount paths
// map to directories holding the rendered ConfigMap data, $(VAR) to values.
type podFS struct {
	mounts map[string]string // mount path -> local directory
	env    map[string]string
}

// args rewrites a container's rendered arguments for a local process; the
// arguments are otherwise exactly the chart's.
func (p podFS) args(c corev1.Container) []string {
	out := make([]string, len(c.Args))
	for i, a := range c.Args {
		for mount, dir := range p.mounts {
			a = strings.ReplaceAll(a, mount, dir)
		}
		for k, v := range p.env {
			a = strings.ReplaceAll(a, "$("+k+")", v)
		}
		out[i] = a
	}
	return out
}

// mountConfigMap writes a rendered ConfigMap's data into a new directory
// standing for mountPath.
func (p podFS) mountConfigMap(t *testing.T, docs []doc, name, mountPath string) {
	t.Helper()
	cm := decodeInto[corev1.ConfigMap](t, find(t, docs, "ConfigMap", name))
	dir := t.TempDir()
	for k, v := range cm.Data {
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p.mounts[mountPath] = dir
}

// start runs a process until the test ends; its output goes to the test log
// when the test fails.
func start(t *testing.T, name, bin string, args ...string) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	logPath := filepath.Join(t.TempDir(), name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		logFile.Close()
		if t.Failed() {
			out, _ := os.ReadFile(logPath)
			t.Logf("%s %q output:\n%s", name, args, out)
		}
	})
	return cmd
}

// waitHTTP polls url until it answers 200 or the deadline passes.
func waitHTTP(t *testing.T, url string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after %v (last error %v)", url, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(b)
}

func decodeContainers(t *testing.T, raw string) []corev1.Container {
	t.Helper()
	var cs []corev1.Container
	if err := yaml.UnmarshalStrict([]byte(raw), &cs); err != nil {
		t.Fatalf("decoding relay snippet: %v", err)
	}
	return cs
}

func localURL(port int, path string) string { return fmt.Sprintf("http://127.0.0.1:%d%s", port, path) }
