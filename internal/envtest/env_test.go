package envtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
)

// kubeVersion names the assets directory build-assets.sh fills by default.
const kubeVersion = "1.37.2"

// cluster is the suite's one control plane, started by the first test that
// needs it and stopped by TestMain.
var cluster struct {
	once sync.Once
	env  *crenvtest.Environment
	err  error
	// skip is why the suite does not run here (no assets, not CI).
	skip string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if cluster.env != nil {
		if err := cluster.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// suiteDir is this package's directory, found from this file so that the
// suite runs from any working directory.
func suiteDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// assetsDir is where kube-apiserver and etcd are: $KUBEBUILDER_ASSETS, else
// the repository's .cache/kube/<version>.
func assetsDir() string {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	return filepath.Join(suiteDir(), "..", "..", ".cache", "kube", kubeVersion)
}

// missingAssets names the binaries dir lacks.
func missingAssets(dir string) []string {
	var missing []string
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if st, err := os.Stat(filepath.Join(dir, b)); err != nil || st.Mode()&0o111 == 0 {
			missing = append(missing, b)
		}
	}
	return missing
}

// admin returns the control plane's admin config (system:masters), starting
// the control plane on first use. Without assets it skips the test, or
// fails it under CI=true: CI builds them, so their absence is a failure.
func admin(t *testing.T) *rest.Config {
	t.Helper()
	cluster.once.Do(startCluster)
	if cluster.skip != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but %s", cluster.skip)
		}
		t.Skip(cluster.skip)
	}
	if cluster.err != nil {
		t.Fatalf("starting kube-apiserver and etcd: %v", cluster.err)
	}
	return rest.CopyConfig(cluster.env.Config)
}

func startCluster() {
	dir := assetsDir()
	if missing := missingAssets(dir); len(missing) > 0 {
		cluster.skip = fmt.Sprintf("no %v in %s: run `make kube-assets` (builds them from the Go module proxy, "+
			"16-45 minutes cold on 2 cores) or point KUBEBUILDER_ASSETS at them", missing, dir)
		return
	}
	crd, err := inferencePoolCRD()
	if err != nil {
		cluster.err = err
		return
	}
	env := &crenvtest.Environment{
		BinaryAssetsDirectory:    dir,
		CRDDirectoryPaths:        []string{crd},
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: 3 * time.Minute, // a loaded 2-core machine
		ControlPlaneStopTimeout:  time.Minute,
	}
	api := env.ControlPlane.GetAPIServer()
	// Loopback only, no controller maintaining the kubernetes Service's
	// endpoints, and RBAC deciding every request of a non-admin user.
	api.Configure().
		Set("advertise-address", "127.0.0.1").
		Set("endpoint-reconciler-type", "none").
		Set("authorization-mode", "RBAC")
	cfg, err := env.Start()
	if err != nil {
		// A start that fails after the processes came up (installing the
		// CRD) leaves them running.
		if stopErr := env.Stop(); stopErr != nil {
			err = fmt.Errorf("%w (stopping: %v)", err, stopErr)
		}
		cluster.err = err
		return
	}
	cfg.QPS, cfg.Burst = 200, 400
	cluster.env = env
}

// gieModule is the Gateway API Inference Extension module whose Go types
// (chart_test.go) and InferencePool CRD the suite uses, at the version this
// module's go.mod requires.
const gieModule = "sigs.k8s.io/gateway-api-inference-extension"

// inferencePoolCRD returns the path of the upstream InferencePool CRD
// (inference.networking.k8s.io/v1) inside the module cache's copy of
// gieModule: the manifest GIE's releases install, not a rewrite of it.
func inferencePoolCRD() (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", gieModule)
	cmd.Dir = suiteDir()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating %s in the module cache: %w", gieModule, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("%s is not in the module cache (go mod download %s)", gieModule, gieModule)
	}
	crd := filepath.Join(dir, "config", "crd", "bases", "inference.networking.k8s.io_inferencepools.yaml")
	if _, err := os.Stat(crd); err != nil {
		return "", err
	}
	return crd, nil
}

var namespaces atomic.Int32

// namespace creates a namespace of its own for a test.
func namespace(t *testing.T, kube kubernetes.Interface) string {
	t.Helper()
	name := fmt.Sprintf("llm-%d", namespaces.Add(1))
	_, err := kube.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return name
}

// clients are typed and dynamic clients for one identity.
type clients struct {
	cfg  *rest.Config
	kube kubernetes.Interface
	dyn  dynamic.Interface
}

func newClients(t *testing.T, cfg *rest.Config) clients {
	t.Helper()
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return clients{cfg: cfg, kube: kube, dyn: dyn}
}

// serviceAccount returns a config that authenticates as the service account
// ns/name with a bound token from the TokenRequest API, as a pod's
// projected token does; the account must exist.
func serviceAccount(t *testing.T, adm clients, ns, name string) *rest.Config {
	t.Helper()
	ttl := int64(3600)
	tok, err := adm.kube.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &ttl}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token for %s/%s: %v", ns, name, err)
	}
	cfg := rest.AnonymousClientConfig(adm.cfg)
	cfg.BearerToken = tok.Status.Token
	return cfg
}
