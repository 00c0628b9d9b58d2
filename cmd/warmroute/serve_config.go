package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/warmroute/warmroute/api"
)

// endpointsFlag collects repeated --endpoints MODEL=IP:PORT,IP:PORT values.
type endpointsFlag []api.PoolConfig

func (f *endpointsFlag) String() string { return fmt.Sprint(*f) }

func (f *endpointsFlag) Set(v string) error {
	name, list, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want MODEL=IP:PORT[,IP:PORT...], got %q", v)
	}
	var eps []string
	for ep := range strings.SplitSeq(list, ",") {
		if ep = strings.TrimSpace(ep); ep != "" {
			eps = append(eps, ep)
		}
	}
	*f = append(*f, api.PoolConfig{Name: name, Endpoints: eps})
	return nil
}

// serveFlags are the command-line settings of `warmroute serve`; each one that
// is given overrides the configuration file.
type serveFlags struct {
	configPath  string
	logLevel    string
	overrides   api.ServeConfig
	endpoints   endpointsFlag
	pipeline    pipelineFlags
	events      eventsFlags     // serve_events.go
	ttl         ttlFlags        // serve_ttl.go
	predictions predictionFlags // serve_predictions.go
}

func newServeFlagSet(stderr io.Writer) (*flag.FlagSet, *serveFlags) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &serveFlags{}
	o := &f.overrides
	fs.StringVar(&f.configPath, "config", "", "YAML configuration file (schema: api.ServeConfig)")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&o.GRPCAddr, "grpc-addr", "", "ext_proc gRPC listen address (default "+api.DefaultGRPCAddr+")")
	fs.StringVar(&o.AdminAddr, "admin-addr", "", "admin HTTP listen address (default "+api.DefaultAdminAddr+")")
	fs.Var(&f.endpoints, "endpoints", "MODEL=IP:PORT[,IP:PORT...]: a pool named MODEL (repeatable; replaces the file's pools)")
	fs.StringVar(&o.DefaultPool, "default-pool", "", "pool for unknown models and requests without a model")
	fs.Int64Var(&o.MaxBodyBytes, "max-body-bytes", 0, "largest accepted request body; larger gets 413 (default 8 MiB)")
	fs.IntVar(&o.Fallbacks, "fallbacks", 0, "further endpoints listed after the chosen one")
	fs.BoolVar(&o.DisableDecisionHeader, "disable-decision-header", false, "do not add x-warmroute-decision")
	fs.BoolVar(&o.DisableResponseParsing, "disable-response-parsing", false, "do not read usage from response bodies")
	fs.Int64Var(&o.MaxResponseBytes, "max-response-bytes", 0, "largest non-streaming response buffered to read its usage (default 1 MiB)")
	fs.StringVar(&o.TLS.CertFile, "tls-cert", "", "PEM certificate for the gRPC listener")
	fs.StringVar(&o.TLS.KeyFile, "tls-key", "", "PEM private key for the gRPC listener")
	fs.BoolVar(&o.TLS.SelfSigned, "tls-self-signed", false, "serve gRPC with a generated self-signed certificate (development)")
	addPipelineFlags(fs, &f.pipeline)
	f.events.register(fs)
	f.ttl.register(fs)
	f.predictions.register(fs)
	return fs, f
}

// parseServeConfig reads the file named by --config, applies the flags that
// were set, fills defaults and validates.
func parseServeConfig(args []string, stderr io.Writer) (api.ServeConfig, string, error) {
	fs, f := newServeFlagSet(stderr)
	if err := fs.Parse(args); err != nil {
		return api.ServeConfig{}, "", err
	}
	if fs.NArg() > 0 {
		return api.ServeConfig{}, "", fmt.Errorf("serve: unexpected arguments %q", fs.Args())
	}
	var cfg api.ServeConfig
	if f.configPath != "" {
		var err error
		if cfg, err = readServeConfigFile(f.configPath); err != nil {
			return api.ServeConfig{}, "", err
		}
	}
	fs.Visit(func(fl *flag.Flag) { applyServeFlag(&cfg, f, fl.Name) })
	if err := applyTokenizerFlags(&cfg, &f.pipeline); err != nil {
		return api.ServeConfig{}, "", err
	}
	if err := validateServeConfig(cfg); err != nil {
		return api.ServeConfig{}, "", fmt.Errorf("invalid configuration: %w", err)
	}
	return cfg.WithDefaults(), f.logLevel, nil
}

func applyServeFlag(cfg *api.ServeConfig, f *serveFlags, name string) {
	o := f.overrides
	switch name {
	case "grpc-addr":
		cfg.GRPCAddr = o.GRPCAddr
	case "admin-addr":
		cfg.AdminAddr = o.AdminAddr
	case "endpoints":
		cfg.Pools = f.endpoints
	case "default-pool":
		cfg.DefaultPool = o.DefaultPool
	case "max-body-bytes":
		cfg.MaxBodyBytes = o.MaxBodyBytes
	case "fallbacks":
		cfg.Fallbacks = o.Fallbacks
	case "disable-decision-header":
		cfg.DisableDecisionHeader = o.DisableDecisionHeader
	case "disable-response-parsing":
		cfg.DisableResponseParsing = o.DisableResponseParsing
	case "max-response-bytes":
		cfg.MaxResponseBytes = o.MaxResponseBytes
	case "tls-cert":
		cfg.TLS.CertFile = o.TLS.CertFile
	case "tls-key":
		cfg.TLS.KeyFile = o.TLS.KeyFile
	case "tls-self-signed":
		cfg.TLS.SelfSigned = o.TLS.SelfSigned
	default:
		// Each group reports whether the flag was its own.
		switch {
		case applyPipelineFlag(cfg, &f.pipeline, name):
		case f.events.apply(&cfg.Events, name):
		case f.ttl.apply(&cfg.TTL, name):
		case f.predictions.apply(&cfg.Events.Predictions, name):
		}
	}
}

// validateServeConfig reports every problem in cfg, its events section
// checked by the type that owns it.
func validateServeConfig(cfg api.ServeConfig) error {
	ec, err := eventsConfig(cfg.Events)
	if err != nil {
		return err
	}
	return errors.Join(cfg.Validate(), ec.Validate())
}

func readServeConfigFile(path string) (api.ServeConfig, error) {
	var cfg api.ServeConfig
	b, err := os.ReadFile(path)
	if err != nil {
		return cfg, fmt.Errorf("reading config: %w", err)
	}
	if err := yaml.UnmarshalStrict(b, &cfg); err != nil {
		return cfg, fmt.Errorf("parsing config %s: %w", path, err)
	}
	return cfg, nil
}
