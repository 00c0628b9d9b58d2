// Package buildinfo says which build of warmroute is running: its version,
// VCS revision and Go version, for `warmroute version` and the
// warmroute_build_info gauge.
package buildinfo
