package api

// Header and metadata names shared by the router, Envoy configuration and the
// simulator. They follow the Gateway API Inference Extension endpoint picker
// protocol so any conforming gateway can use warmroute.
const (
	// DestinationHeader carries the chosen endpoint ("ip:port"), optionally
	// followed by comma-separated fallbacks in preference order.
	DestinationHeader = "x-gateway-destination-endpoint"
	// DestinationMetadataNamespace is the dynamic metadata namespace in which
	// the router repeats DestinationHeader for Envoy's load balancer.
	DestinationMetadataNamespace = "envoy.lb"
	// SubsetHintNamespace is the filter metadata namespace in which a gateway
	// may restrict the candidate endpoints.
	SubsetHintNamespace = "envoy.lb.subset_hint"
	// SubsetHintKey names the list of allowed endpoints inside SubsetHintNamespace.
	SubsetHintKey = "x-gateway-destination-endpoint-subset"
	// ServedHeader is reported by a gateway for the endpoint that actually served.
	ServedHeader = "x-gateway-destination-endpoint-served"
	// DecisionHeader explains a routing decision; it can be switched off.
	DecisionHeader = "x-warmroute-decision"
	// PrefillerHeader names, in a prefill/decode pool, the prefiller
	// ("ip:port") that the decoder's sidecar sends the prompt to first, as
	// llm-d's routing sidecar reads it. The router sets it on disaggregated
	// decisions and strips a client's copy on every other.
	PrefillerHeader = "x-prefiller-host-port"
	// PrefilledByHeader is set by a decode simulator on a response whose
	// prompt a prefiller computed, to that prefiller's ServedByHeader.
	PrefilledByHeader = "x-warmroute-prefilled-by"
	// ServedByHeader is set by the simulator on every response to name the
	// instance that produced it.
	ServedByHeader = "x-warmroute-served-by"
)

// RoleLabel is the Pod label llm-d gives model-server Pods for their part in
// prefill/decode disaggregation (prefill, decode, prefill-decode, ...); the
// router reads it from an InferencePool's members.
const RoleLabel = "llm-d.ai/role"
