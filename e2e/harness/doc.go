// Package harness runs warmroute end to end on one machine with real
// processes: it builds the warmroute binary, finds or installs a real Envoy,
// picks free loopback ports, starts simulators, the router and Envoy with
// their output captured to log files, waits until each is ready, and stops
// them again. The e2e tests, the demo and the load harness share it.
//
// Everything listens on 127.0.0.1 only.
//
// # Ownership
//
// A Process owns its child and the goroutine that waits for it; Stop ends
// both. A Stack owns its processes and its working directory; Close stops the
// processes in reverse start order and keeps the directory (logs) only when
// asked to.
package harness
