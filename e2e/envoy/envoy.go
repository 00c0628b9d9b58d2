// Package envoy holds the Envoy configurations warmroute is documented and
// tested with: standalone.yaml and fallbacks.yaml, commented examples for
// users, and the templates the end-to-end harness renders, one per ext_proc
// body mode plus a baseline that bypasses warmroute.
package envoy

import (
	"bytes"
	"embed"
	"fmt"
	"text/template"
)

//go:embed standalone.yaml fallbacks.yaml *.yaml.tmpl partials.tmpl
var files embed.FS

// templates is parsed once; every config template shares partials.tmpl.
var templates = template.Must(template.New("").Option("missingkey=error").
	ParseFS(files, "*.yaml.tmpl", "partials.tmpl"))

// Template names one renderable Envoy configuration.
type Template string

// The templates the harness can render.
const (
	// Buffered routes through warmroute with request_body_mode BUFFERED.
	Buffered Template = "buffered.yaml.tmpl"
	// FullDuplex routes through warmroute with request_body_mode
	// FULL_DUPLEX_STREAMED.
	FullDuplex Template = "full_duplex.yaml.tmpl"
	// Direct sends every request to one upstream, without ext_proc: the
	// baseline the load harness compares against.
	Direct Template = "direct.yaml.tmpl"
)

// Templates lists every template, for callers that validate them all.
func Templates() []Template { return []Template{Buffered, FullDuplex, Direct} }

// DefaultBufferLimitBytes is Envoy's request body buffer limit when
// Params.BufferLimitBytes is zero: above warmroute's default --max-body-bytes
// (8 MiB) so that warmroute, not Envoy, answers oversize bodies.
const DefaultBufferLimitBytes = 16 << 20

// Params fills a template. All addresses are on 127.0.0.1. The zero value is
// not renderable: ListenPort and AdminPort, and RouterPort or UpstreamPort as
// the template needs, must be set.
type Params struct {
	ListenPort int // Envoy's HTTP listener
	AdminPort  int // Envoy's admin API
	RouterPort int // warmroute's ext_proc gRPC port (Buffered, FullDuplex)
	// ExtraRouterPorts are further warmroute replicas in the ext_proc
	// cluster. Envoy picks one per ext_proc stream (that is, per request),
	// round robin, so the two requests of a pair meet different replicas.
	ExtraRouterPorts []int
	// UpstreamPort is the single model server of the Direct template.
	UpstreamPort int
	// BufferLimitBytes bounds buffered request bodies; zero means
	// DefaultBufferLimitBytes.
	BufferLimitBytes int64
	// AccessLog writes one line per request to Envoy's stdout.
	AccessLog bool
	// SubsetHintHeader turns the test-only request header x-e2e-subset-hint
	// into envoy.lb.subset_hint metadata (ext_proc templates only).
	SubsetHintHeader bool
	// RouterTLS, when set, makes Envoy speak TLS to warmroute (ext_proc
	// templates only).
	RouterTLS *UpstreamTLS
	// ModelServers, when set, makes the model servers a STATIC cluster of
	// these endpoints behind Envoy's override_host load balancing policy
	// (ext_proc templates only): Envoy reads warmroute's whole list, primary
	// then fallbacks, and Retries retries move a request that could not
	// reach an endpoint to the next. Empty keeps the ORIGINAL_DST cluster,
	// which sends to the first endpoint only.
	ModelServers []HostPort
	// Retries is the route's retry count with ModelServers: warmroute's
	// fallbacks setting.
	Retries int
}

// HostPort is one model server of Params.ModelServers.
type HostPort struct {
	Host string // an IP address: a STATIC cluster resolves no names
	Port int
}

// UpstreamTLS is Envoy's TLS to warmroute: the CA that verifies the
// router's certificate (for the name localhost) and, for mutual TLS, the
// client certificate Envoy presents. Paths are PEM files.
type UpstreamTLS struct {
	CAFile string
	// CertFile and KeyFile are Envoy's client certificate; both or neither.
	CertFile, KeyFile string
}

// Render returns the configuration t filled with p.
func Render(t Template, p Params) ([]byte, error) {
	if err := p.check(t); err != nil {
		return nil, fmt.Errorf("rendering %s: %w", t, err)
	}
	if p.BufferLimitBytes == 0 {
		p.BufferLimitBytes = DefaultBufferLimitBytes
	}
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, string(t), p); err != nil {
		return nil, fmt.Errorf("rendering %s: %w", t, err)
	}
	return buf.Bytes(), nil
}

// Standalone returns standalone.yaml, the commented example configuration.
func Standalone() []byte { return embedded("standalone.yaml") }

// Fallbacks returns fallbacks.yaml, the commented example configuration for
// warmroute's fallbacks (override_host over known model servers).
func Fallbacks() []byte { return embedded("fallbacks.yaml") }

func embedded(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		panic("envoy: " + name + " is embedded but unreadable: " + err.Error())
	}
	return b
}

func (p Params) check(t Template) error {
	type port struct {
		name  string
		value int
	}
	ports := []port{{"ListenPort", p.ListenPort}, {"AdminPort", p.AdminPort}}
	switch t {
	case Buffered, FullDuplex:
		ports = append(ports, port{"RouterPort", p.RouterPort})
		for _, rp := range p.ExtraRouterPorts {
			ports = append(ports, port{"ExtraRouterPorts", rp})
		}
	case Direct:
		ports = append(ports, port{"UpstreamPort", p.UpstreamPort})
	default:
		return fmt.Errorf("%w %q", ErrUnknownTemplate, t)
	}
	for _, pt := range ports {
		if pt.value < 1 || pt.value > 65535 {
			return fmt.Errorf("%w: %s must be 1-65535, got %d", ErrInvalidParams, pt.name, pt.value)
		}
	}
	for _, hp := range p.ModelServers {
		if hp.Host == "" || hp.Port < 1 || hp.Port > 65535 {
			return fmt.Errorf("%w: ModelServers entry %+v needs an IP and a port 1-65535", ErrInvalidParams, hp)
		}
	}
	if p.Retries < 0 || (p.Retries > 0 && len(p.ModelServers) == 0) {
		return fmt.Errorf("%w: Retries must not be negative and needs ModelServers", ErrInvalidParams)
	}
	if p.BufferLimitBytes < 0 {
		return fmt.Errorf("%w: BufferLimitBytes must not be negative", ErrInvalidParams)
	}
	if r := p.RouterTLS; r != nil && (r.CAFile == "" || (r.CertFile == "") != (r.KeyFile == "")) {
		return fmt.Errorf("%w: RouterTLS needs CAFile, and CertFile with KeyFile", ErrInvalidParams)
	}
	return nil
}
