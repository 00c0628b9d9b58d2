package subscriber

// MarshalVLLM exposes the ingestion benchmark's vLLM 0.33 message encoder
// to the external tests.
var MarshalVLLM = marshalVLLM
