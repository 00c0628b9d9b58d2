package envtest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/router"
	"github.com/warmroute/warmroute/scorer"
)

// kubeconfig writes cfg's server, CA and bearer token as a kubeconfig file,
// what `warmroute serve` reads from $KUBECONFIG outside a cluster.
func kubeconfig(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	server := cfg.Host
	if !strings.Contains(server, "://") {
		server = "https://" + server
	}
	c := clientcmdapi.NewConfig()
	c.Clusters["envtest"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: cfg.CAData}
	c.AuthInfos["router"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	c.Contexts["router"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "router"}
	c.CurrentContext = "router"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*c, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// startServe starts the warmroute binary's `serve` following ns/pool with
// the identity in kubeconfig and waits until it reports ready.
func startServe(ctx context.Context, t *testing.T, bin, kubeconfig, ns, pool string) (*harness.Router, error) {
	t.Helper()
	ports, err := harness.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	var cfg router.Config
	cfg.GRPCAddr, cfg.AdminAddr = harness.Addr(ports[0]), harness.Addr(ports[1])
	cfg.Events.Disabled = true
	cfg.Pools = []scorer.PoolConfig{{Name: model, InferencePool: ns + "/" + pool}}
	t.Setenv("KUBECONFIG", kubeconfig) // the router process inherits it
	r, err := harness.StartRouter(ctx, bin, t.TempDir(), cfg)
	if r != nil {
		t.Cleanup(func() { _ = r.Stop() })
	}
	return r, err
}

// TestServeFollowsThePool runs the warmroute binary as `warmroute serve`
// with a kubeconfig for the chart's service account: it turns ready once
// the pool has synced and its members gauge follows a readiness flip. With
// the chart's Role lacking watch on pods it never turns ready and its log
// names the forbidden request.
func TestServeFollowsThePool(t *testing.T) {
	adm := newClients(t, admin(t))
	ctx := context.Background()
	bin, err := harness.Warmroute(ctx, filepath.Join(suiteDir(), "..", ".."), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}

	ns := namespace(t, adm.kube)
	chart := installChart(t, adm, ns)
	pool := chart.one(t, "InferencePool").GetName()
	a := podSpec{name: "a", ip: "192.0.2.1", labels: map[string]string{"app": "vllm"}, ready: true}
	addPod(t, adm, ns, a)
	addPod(t, adm, ns, podSpec{name: "b", ip: "192.0.2.2", labels: map[string]string{"app": "vllm"}, ready: true})
	sa := kubeconfig(t, serviceAccount(t, adm, ns, chart.one(t, "ServiceAccount").GetName()))
	r, err := startServe(ctx, t, bin, sa, ns, pool)
	if err != nil {
		t.Fatalf("warmroute serve with the chart's Role: %v", err)
	}
	members := func(want float64) {
		t.Helper()
		pctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		err := harness.PollMetric(pctx, r.MetricsURL(), r.Process, func(m harness.Metrics) bool {
			v, _ := m.Value("warmroute_inferencepool_members", nil)
			return v == want
		})
		if err != nil {
			t.Fatalf("warmroute_inferencepool_members never %v: %v", want, err)
		}
	}
	members(2)
	a.ready = false
	setReady(t, adm, ns, a)
	members(1)

	t.Run("without watch on pods", func(t *testing.T) {
		ns := namespace(t, adm.kube)
		chart := renderChart(t, ns)
		for _, o := range []*unstructured.Unstructured{chart.one(t, "ServiceAccount"),
			withoutVerb(t, chart.one(t, "Role"), "pods", "watch"), chart.one(t, "RoleBinding"), chart.one(t, "InferencePool")} {
			if _, err := create(ctx, adm.dyn, o); err != nil {
				t.Fatal(err)
			}
		}
		sa := kubeconfig(t, serviceAccount(t, adm, ns, chart.one(t, "ServiceAccount").GetName()))
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		_, err := startServe(sctx, t, bin, sa, ns, pool)
		if err == nil {
			t.Fatal("warmroute serve turned ready without watch on pods")
		}
		if msg := err.Error(); !strings.Contains(msg, "cannot list or watch") || !strings.Contains(msg, `cannot watch resource \"pods\"`) {
			t.Errorf("the router's log does not name the forbidden watch:\n%s", msg)
		}
	})
}
