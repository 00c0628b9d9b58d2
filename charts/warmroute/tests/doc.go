// Package tests checks the warmroute Helm chart offline: helm lint and helm
// template through the Helm Go SDK over several value sets, every rendered
// document strictly decoded into the Kubernetes and prometheus-operator Go
// types, the rendered router configuration decoded into router.Config, the
// rendered Envoy bootstrap validated by a real Envoy, the Grafana dashboard
// checked against the router's /metrics, and the router, relay and simulator
// run as processes with exactly the arguments the chart renders.
//
// It is its own Go module so that Helm and k8s.io stay out of the router's
// dependencies. Run it from this directory: go test ./...
package tests
