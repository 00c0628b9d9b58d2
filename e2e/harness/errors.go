package harness

import "errors"

var (
	// ErrEnvoyNotFound reports that no Envoy binary was found: neither
	// $WARMROUTE_ENVOY nor the project's .cache/envoy-venv.
	ErrEnvoyNotFound = errors.New("envoy binary not found")
	// ErrExited reports that a process ended while the harness still needed
	// it, typically before it became ready.
	ErrExited = errors.New("process exited")
	// ErrNotReady reports that a readiness probe did not succeed in time.
	ErrNotReady = errors.New("not ready")
)
