// Package envtest holds warmroute's Kubernetes suite: the InferencePool
// membership watcher, the chart's RBAC Role and the chart's rendered
// InferencePool, run against a real kube-apiserver and etcd under
// controller-runtime's envtest. No controllers run: the tests create Pods
// and set their status themselves.
//
// The binaries come from build-assets.sh (`make kube-assets`), which builds
// them from the Go module proxy into .cache/kube/<version>/; KUBEBUILDER_ASSETS
// names another directory. Without them the suite skips, unless CI=true, where
// it fails.
//
// A module of its own keeps controller-runtime and Helm out of warmroute's
// go.mod.
package envtest
