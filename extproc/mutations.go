package extproc

import (
	json "encoding/json/v2"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	filterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/scorer"
)

// The messages the server sends Envoy: header and body mutations, the
// ProcessingResponse of each phase, and the ImmediateResponse that ends a
// request with an error.

const destinationHeaderName = api.DestinationHeader

// destination is the header and metadata value: the chosen endpoint followed
// by its fallbacks, comma-separated, in preference order. It is built in
// one allocation (strings.Join of Targets would take two).
func destination(d *scorer.Decision) string {
	if len(d.Fallbacks) == 0 {
		return d.Endpoint
	}
	n := len(d.Endpoint)
	for _, f := range d.Fallbacks {
		n += 1 + len(f)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(d.Endpoint)
	for _, f := range d.Fallbacks {
		b.WriteByte(',')
		b.WriteString(f)
	}
	return b.String()
}

// destinationMetadata is {"envoy.lb": {"x-gateway-destination-endpoint": v}}.
func destinationMetadata(v string) *structpb.Struct {
	inner := &structpb.Struct{Fields: map[string]*structpb.Value{api.DestinationHeader: structpb.NewStringValue(v)}}
	return &structpb.Struct{Fields: map[string]*structpb.Value{api.DestinationMetadataNamespace: structpb.NewStructValue(inner)}}
}

// headerOption overwrites (never appends to) a header, so a client cannot
// smuggle in its own destination. The value goes in raw_value, which is where
// Envoy reads mutations from.
func headerOption(key, value string) *corev3.HeaderValueOption {
	return &corev3.HeaderValueOption{
		Header:       &corev3.HeaderValue{Key: key, RawValue: []byte(value)},
		AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
	}
}

func setHeaders(opts ...*corev3.HeaderValueOption) *extprocv3.HeaderMutation {
	return &extprocv3.HeaderMutation{SetHeaders: opts}
}

// removeHeader adds key to m's removals, creating m when nil.
func removeHeader(m *extprocv3.HeaderMutation, key string) *extprocv3.HeaderMutation {
	if m == nil {
		m = &extprocv3.HeaderMutation{}
	}
	m.RemoveHeaders = append(m.RemoveHeaders, key)
	return m
}

func decisionHeader(d *scorer.Decision) *corev3.HeaderValueOption {
	return headerOption(api.DecisionHeader, headerSafe(d.Reason))
}

// headerSafe drops bytes Envoy rejects in header values, which would fail the
// whole mutation.
func headerSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' || r == 0x7f {
			return -1
		}
		return r
	}, s)
}

func requestHeadersResponse(c *extprocv3.CommonResponse) *extprocv3.ProcessingResponse {
	return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestHeaders{
		RequestHeaders: &extprocv3.HeadersResponse{Response: c}}}
}

func requestBodyResponse(c *extprocv3.CommonResponse) *extprocv3.ProcessingResponse {
	return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestBody{
		RequestBody: &extprocv3.BodyResponse{Response: c}}}
}

func requestTrailersResponse() *extprocv3.ProcessingResponse {
	return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestTrailers{
		RequestTrailers: &extprocv3.TrailersResponse{}}}
}

func responseHeadersResponse(c *extprocv3.CommonResponse) *extprocv3.ProcessingResponse {
	return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseHeaders{
		ResponseHeaders: &extprocv3.HeadersResponse{Response: c}}}
}

func responseTrailersResponse() *extprocv3.ProcessingResponse {
	return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseTrailers{
		ResponseTrailers: &extprocv3.TrailersResponse{}}}
}

// streamedMutation carries a body chunk in the form FULL_DUPLEX_STREAMED
// (and GRPC) modes require; Envoy rejects a plain body mutation there.
func streamedMutation(body []byte, endOfStream bool) *extprocv3.CommonResponse {
	return &extprocv3.CommonResponse{BodyMutation: &extprocv3.BodyMutation{
		Mutation: &extprocv3.BodyMutation_StreamedResponse{StreamedResponse: &extprocv3.StreamedBodyResponse{
			Body: body, EndOfStream: endOfStream}}}}
}

func streamedRequestBody(body []byte, endOfStream bool) *extprocv3.ProcessingResponse {
	return requestBodyResponse(streamedMutation(body, endOfStream))
}

func streamedMode(m filterv3.ProcessingMode_BodySendMode) bool {
	return m == filterv3.ProcessingMode_FULL_DUPLEX_STREAMED || m == filterv3.ProcessingMode_GRPC
}

// passRequestBody answers a request body chunk without changing it.
func passRequestBody(mode filterv3.ProcessingMode_BodySendMode, b *extprocv3.HttpBody) *extprocv3.ProcessingResponse {
	if streamedMode(mode) {
		return streamedRequestBody(b.GetBody(), b.GetEndOfStream())
	}
	return requestBodyResponse(&extprocv3.CommonResponse{})
}

// passResponseBody answers a response body chunk without changing it.
func passResponseBody(mode filterv3.ProcessingMode_BodySendMode, b *extprocv3.HttpBody) *extprocv3.ProcessingResponse {
	c := &extprocv3.CommonResponse{}
	if streamedMode(mode) {
		c = streamedMutation(b.GetBody(), b.GetEndOfStream())
	}
	return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseBody{
		ResponseBody: &extprocv3.BodyResponse{Response: c}}}
}

// immediateResponse ends the request with status and an OpenAI error body.
func immediateResponse(status int, body api.ErrorResponse, o outcome) *extprocv3.ProcessingResponse {
	b, err := json.Marshal(body)
	if err != nil {
		// ErrorResponse always marshals; keep the client informed regardless.
		b = []byte(`{"error":{"message":"internal error in the router","type":"internal_error","param":null,"code":500}}`)
	}
	headers := setHeaders(headerOption("content-type", "application/json"))
	if o == outcomeOverloaded || o == outcomeShed {
		// The budget frees as other bodies finish, within about a second;
		// an engine queue moves on as fast as its batches complete.
		headers.SetHeaders = append(headers.SetHeaders, headerOption("retry-after", "1"))
	}
	return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ImmediateResponse{
		ImmediateResponse: &extprocv3.ImmediateResponse{
			Status:  &typev3.HttpStatus{Code: typev3.StatusCode(status)},
			Headers: headers,
			Body:    b,
			Details: "warmroute_" + o.String(),
		}}}
}
