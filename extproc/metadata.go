package extproc

import (
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/warmroute/warmroute/api"
)

// subsetHint reads the gateway's endpoint subset from
// filter_metadata["envoy.lb.subset_hint"]["x-gateway-destination-endpoint-subset"]:
// a list of "ip:port" strings or one comma-separated string. It returns nil
// when there is no hint and a non-nil (possibly empty) slice when there is.
// A hint of any other type allows no endpoint: the gateway asked for a
// restriction, and routing outside it would be worse than a 503.
func subsetHint(md *corev3.Metadata) []string {
	v := md.GetFilterMetadata()[api.SubsetHintNamespace].GetFields()[api.SubsetHintKey]
	if v == nil {
		return nil
	}
	out := []string{}
	switch k := v.GetKind().(type) {
	case *structpb.Value_ListValue:
		for _, e := range k.ListValue.GetValues() {
			out = appendEndpoints(out, e.GetStringValue())
		}
	case *structpb.Value_StringValue:
		out = appendEndpoints(out, k.StringValue)
	}
	return out
}

func appendEndpoints(out []string, s string) []string {
	for ep := range strings.SplitSeq(s, ",") {
		if ep = strings.TrimSpace(ep); ep != "" {
			out = append(out, ep)
		}
	}
	return out
}

// headerValue reads a header from Envoy, which sends raw_value (bytes) by
// default and value (UTF-8 string) when send_header_raw_value is off.
func headerValue(h *corev3.HeaderValue) string {
	if len(h.GetRawValue()) > 0 {
		return string(h.GetRawValue())
	}
	return h.GetValue()
}
