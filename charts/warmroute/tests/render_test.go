package tests

import (
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
	return install.Run(chrt, vals)
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
