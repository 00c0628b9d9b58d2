package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	"sigs.k8s.io/yaml"
)

const (
	releaseName = "wr"
	namespace   = "llm"
)

// kubeVersion is the cluster version rendered for: the oldest the chart
// supports (Chart.yaml kubeVersion) would also do; Helm's default is older.
var kubeVersion = &chartutil.KubeVersion{Version: "v1.33.0", Major: "1", Minor: "33"}

// chartDir is charts/warmroute, found from this file so tests run from any
// working directory.
func chartDir(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("locating the test source")
	}
	return filepath.Dir(filepath.Dir(file))
}

// repoRoot is the main module's root, two levels above the chart.
func repoRoot(t testing.TB) string {
	return filepath.Dir(filepath.Dir(chartDir(t)))
}

// doc is one rendered Kubernetes object with the template it came from.
type doc struct {
	Source     string
	APIVersion string
	Kind       string
	Name       string
	Raw        []byte
}

func (d doc) String() string {
	return fmt.Sprintf("%s %s/%s (%s)", d.Kind, d.APIVersion, d.Name, d.Source)
}

// render runs `helm template` with vals through the SDK, as `helm install
// --dry-run --client-only` does, and splits the manifest into documents.
func render(t testing.TB, vals map[string]any) []doc {
	t.Helper()
	docs, err := tryRender(chartDir(t), vals)
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	return docs
}

func tryRender(dir string, vals map[string]any) ([]doc, error) {
	rel, err := dryRunInstall(dir, vals)
	if err != nil {
		return nil, err
	}
	return splitDocs(rel.Manifest)
}

// dryRunInstall is `helm install --dry-run --client-only`: the release holds
// the manifest and the rendered NOTES.
func dryRunInstall(dir string, vals map[string]any) (*release.Release, error) {
	chrt, err := loader.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("loading chart: %w", err)
	}
	cfg := &action.Configuration{
		Releases:     storage.Init(driver.NewMemory()),
		KubeClient:   &kubefake.PrintingKubeClient{Out: io.Discard},
		Capabilities: chartutil.DefaultCapabilities,
		Log:          func(string, ...any) {},
	}
	install := action.NewInstall(cfg)
	install.DryRun, install.ClientOnly, install.Replace = true, true, true
	install.ReleaseName, install.Namespace = releaseName, namespace
	install.KubeVersion = kubeVersion
	// Helm coalesces the chart's defaults into the map it is given: pass a
	// copy, so the tests' value sets stay as written.
	copied, err := deepCopyValues(vals)
	if err != nil {
		return nil, err
	}
	return install.Run(chrt, withModelServers(copied))
}

func deepCopyValues(vals map[string]any) (map[string]any, error) {
	b, err := json.Marshal(vals)
	if err != nil {
		return nil, fmt.Errorf("copying values: %w", err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("copying values: %w", err)
	}
	return out, nil
}

// testModelServers is the pool tests render with when their values give
// the router no way to learn a model server (the chart refuses to render
// such an install: TestUnroutableInstallFails renders without it).
func testModelServers() []any {
	return []any{m{"name": "my-model", "models": []any{"my-model"}, "endpoints": []any{"10.0.0.5:8000"}}}
}

// withModelServers returns vals, with testModelServers as the router's
// pools when vals set no pools, no NATS and no InferencePool. A nil
// "router.config.pools" asks for none.
func withModelServers(vals map[string]any) map[string]any {
	sub := func(v map[string]any, key string) map[string]any {
		x, _ := v[key].(map[string]any)
		return x
	}
	cfg := sub(sub(vals, "router"), "config")
	if _, set := cfg["pools"]; set || sub(vals, "nats")["mode"] != nil || sub(vals, "inferencePool")["enabled"] == true {
		return vals
	}
	out := map[string]any{}
	for k, v := range vals {
		out[k] = v
	}
	router := map[string]any{}
	for k, v := range sub(vals, "router") {
		router[k] = v
	}
	config := map[string]any{"pools": testModelServers()}
	for k, v := range cfg {
		config[k] = v
	}
	router["config"] = config
	out["router"] = router
	return out
}

func splitDocs(manifest string) ([]doc, error) {
	var docs []doc
	for _, raw := range releaseutil.SplitManifests(manifest) {
		source := ""
		if line, _, ok := strings.Cut(raw, "\n"); ok && strings.HasPrefix(line, "# Source: ") {
			source = strings.TrimPrefix(line, "# Source: ")
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(raw), &head); err != nil {
			return nil, fmt.Errorf("parsing %s: %w", source, err)
		}
		if head.Kind == "" {
			continue // a template that rendered only comments
		}
		docs = append(docs, doc{source, head.APIVersion, head.Kind, head.Metadata.Name, []byte(raw)})
	}
	return docs, nil
}

// find returns the one rendered object of kind named name, or fails.
func find(t testing.TB, docs []doc, kind, name string) doc {
	t.Helper()
	for _, d := range docs {
		if d.Kind == kind && d.Name == name {
			return d
		}
	}
	t.Fatalf("no %s %q rendered", kind, name)
	return doc{}
}

func decodeInto[T any](t testing.TB, d doc) *T {
	t.Helper()
	v := new(T)
	if err := yaml.UnmarshalStrict(d.Raw, v); err != nil {
		t.Fatalf("decoding %s: %v", d, err)
	}
	return v
}
