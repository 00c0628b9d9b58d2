// Package extproc is warmroute's Envoy external-processing (ext_proc) gRPC
// service: it reads each LLM request Envoy streams to it, parses the OpenAI
// body, asks a Picker for an endpoint and tells Envoy where to send the
// request, answering bad input with an OpenAI-style error.
//
// # Protocol
//
// One gRPC stream carries one HTTP request and its response. The request body
// mode is read from the protocol_config of the stream's first message (or
// Options.DefaultBodyMode):
//
//   - BUFFERED: request headers are answered with CONTINUE; the body response
//     carries the destination header mutation and clear_route_cache.
//   - FULL_DUPLEX_STREAMED: the headers response is held until the body is
//     complete (end_of_stream, or request trailers); then the headers response
//     carries the destination and Content-Length, followed by the body in
//     StreamedBodyResponse chunks of at most 62,000 bytes. Envoy requires the
//     request trailer mode SEND in this body mode.
//   - header-only requests, NONE, STREAMED: routed on load alone in the
//     headers response.
//
// The destination is the header x-gateway-destination-endpoint (the chosen
// endpoint, then fallbacks, comma-separated) and the same value in dynamic
// metadata envoy.lb. The routing Decision is committed when that answer is
// sent; on the response headers it hears the endpoint the proxy reports
// having used (envoy.lb / x-gateway-destination-endpoint-served metadata or
// the response header of that name, which is then removed), so a fallback
// that served holds the load and predictions, then ResponseStarted; Usage once
// and then Release when the response ends, the stream breaks or the client
// goes away. Once the answer is sent the decision settles (the commit's
// deferred expiry, Decision.Settle), and once the stream is over it is
// ended with Done, which recycles it. Release happens at the latest when Envoy closes the stream, so
// Envoy must send response headers (and, to count until the last byte, the
// response body) for the load accounting to cover the whole response.
//
// # Response usage
//
// When Envoy sends response bodies, usage.prompt_tokens and
// usage.prompt_tokens_details.cached_tokens are read from 2xx responses with
// the openai package: an incremental event parser for event streams
// (keeping only the last event with a non-null usage) and a bounded buffer
// for JSON bodies (Options.MaxResponseBytes). A missing or null cached_tokens is reported as
// unknown, never as zero. Bodies are passed on unchanged.
//
// # Concurrency
//
// A Server is safe for concurrent use; every stream is handled by its own
// Process call. Within a stream, one goroutine receives messages and the
// Process goroutine owns all per-stream state and sends every answer.
//
// # Ownership
//
// Process owns its receive goroutine, which ends when Recv fails; gRPC makes
// it fail once Process returns. Body bytes received from Envoy are referenced,
// not copied, by the answers that echo them; the usage readers copy what they
// keep, at most about Options.MaxResponseBytes per direction of use.
package extproc
