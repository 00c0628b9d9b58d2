package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/warmroute/warmroute/e2e/envoy"
	"github.com/warmroute/warmroute/router"
)

// SimOptions configures one `warmroute sim`. Stack fills an empty ID and
// Models; StartSim takes them as given.
type SimOptions struct {
	ID     string
	Models []string
	// Args are further flags, such as "--ttft", "0s" for a simulator that
	// answers at once.
	Args []string
}

// Sim is a running simulator, made by StartSim. Its methods, those of
// Process, are safe for concurrent use.
type Sim struct {
	ID   string
	Addr string // "127.0.0.1:port", also its endpoint in router pools
	Port int
	*Process
}

// StartSim starts `warmroute sim` on port and waits until /health answers.
func StartSim(ctx context.Context, bin, logDir string, port int, o SimOptions) (*Sim, error) {
	addr := Addr(port)
	args := []string{"sim", "--addr", addr, "--id", o.ID, "--models", strings.Join(o.Models, ",")}
	args = append(args, o.Args...)
	p, err := Start(o.ID, logDir, bin, args...)
	if err != nil {
		return nil, err
	}
	if err := waitOrStop(ctx, "http://"+addr+"/health", p); err != nil {
		return nil, err
	}
	return &Sim{ID: o.ID, Addr: addr, Port: port, Process: p}, nil
}

// Router is a running `warmroute serve`, made by StartRouter and restartable
// on the same ports. Restart replaces the embedded Process, so Restart must
// not run concurrently with other uses of the Router.
type Router struct {
	GRPCAddr  string
	AdminAddr string // /metrics, /healthz, /readyz
	DebugAddr string // /debug/index/*, /debug/ttl; "" with debugAddr off
	// NATSAddr is the router's embedded NATS server ("" when it has none),
	// which relays publish to.
	NATSAddr   string
	ConfigPath string
	bin        string
	logDir     string
	extraArgs  []string
	*Process
}

// StartRouter writes cfg (GRPCAddr and AdminAddr must be set) to
// logDir/router.yaml, starts `warmroute serve --config` with it plus
// extraArgs, and waits until /readyz answers. An empty DebugAddr gets a free
// loopback port, since the default one would collide between routers.
func StartRouter(ctx context.Context, bin, logDir string, cfg router.Config, extraArgs ...string) (*Router, error) {
	if !cfg.Events.Disabled && cfg.Events.URL == "" && cfg.Events.Listen == "" {
		// Each router's embedded NATS gets its own port, so tests can run
		// side by side; the default 4222 would collide.
		ports, err := FreePorts(1)
		if err != nil {
			return nil, err
		}
		cfg.Events.Listen = Addr(ports[0])
	}
	if cfg.DebugAddr == "" {
		ports, err := FreePorts(1)
		if err != nil {
			return nil, err
		}
		cfg.DebugAddr = Addr(ports[0])
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encoding router config: %w", err)
	}
	path := filepath.Join(logDir, "router.yaml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return nil, fmt.Errorf("writing router config: %w", err)
	}
	debugAddr := cfg.DebugAddr
	if debugAddr == router.DebugOff {
		debugAddr = ""
	}
	r := &Router{GRPCAddr: cfg.GRPCAddr, AdminAddr: cfg.AdminAddr, DebugAddr: debugAddr, ConfigPath: path, NATSAddr: cfg.Events.Listen,
		bin: bin, logDir: logDir, extraArgs: extraArgs}
	if err := r.Restart(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// Restart starts the router again with the same configuration and ports
// (after Stop, or a crash) and waits until it is ready.
func (r *Router) Restart(ctx context.Context) error {
	args := append([]string{"serve", "--config", r.ConfigPath}, r.extraArgs...)
	p, err := Start("router", r.logDir, r.bin, args...)
	if err != nil {
		return err
	}
	r.Process = p
	return waitOrStop(ctx, "http://"+r.AdminAddr+"/readyz", p)
}

// MetricsURL is the router's Prometheus endpoint.
func (r *Router) MetricsURL() string { return "http://" + r.AdminAddr + "/metrics" }

// Envoy is a running Envoy, made by StartEnvoy. Its methods are safe for
// concurrent use.
type Envoy struct {
	ListenAddr string
	AdminAddr  string
	ConfigPath string
	*Process
}

// StartEnvoy renders t with p into logDir/name.yaml, starts Envoy with it
// using concurrency worker threads, and waits until its admin /ready answers.
func StartEnvoy(ctx context.Context, bin, logDir, name string, t envoy.Template, p envoy.Params, concurrency int) (*Envoy, error) {
	conf, err := envoy.Render(t, p)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(logDir, name+".yaml")
	if err := os.WriteFile(path, conf, 0o644); err != nil {
		return nil, fmt.Errorf("writing envoy config: %w", err)
	}
	// Hot restart is off so that several Envoys can run side by side
	// without agreeing on shared-memory base ids.
	proc, err := Start(name, logDir, bin, "-c", path, "--disable-hot-restart",
		"--concurrency", strconv.Itoa(concurrency), "--log-level", "warning")
	if err != nil {
		return nil, err
	}
	if err := waitOrStop(ctx, "http://"+Addr(p.AdminPort)+"/ready", proc); err != nil {
		return nil, err
	}
	return &Envoy{ListenAddr: Addr(p.ListenPort), AdminAddr: Addr(p.AdminPort), ConfigPath: path, Process: proc}, nil
}

// URL returns the address of path on Envoy's listener.
func (e *Envoy) URL(path string) string { return "http://" + e.ListenAddr + path }

// waitOrStop waits for url; on failure it stops p and returns the error with
// the end of p's log, since that is where the reason is.
func waitOrStop(ctx context.Context, url string, p *Process) error {
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	if err := WaitReady(ctx, url, p); err != nil {
		_ = p.Stop()
		return fmt.Errorf("starting %s: %w\n--- %s (last lines) ---\n%s", p.Name(), err, p.LogPath(), p.Tail(30))
	}
	return nil
}
