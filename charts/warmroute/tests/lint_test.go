package tests

import (
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
)

// TestLint runs `helm lint --strict` (any message, even INFO, fails) over
// every value set.
func TestLint(t *testing.T) {
	for _, vs := range valueSets {
		t.Run(vs.name, func(t *testing.T) {
			// A copy: lint coalesces the chart's defaults into its values.
			vals, err := deepCopyValues(vs.vals)
			if err != nil {
				t.Fatal(err)
			}
			res := lint.AllWithKubeVersion(chartDir(t), withModelServers(vals), namespace, kubeVersion)
			for _, msg := range res.Messages {
				if msg.Severity > support.InfoSev || !ignorableLint(msg) {
					t.Errorf("helm lint: %v", msg)
				}
			}
		})
	}
}

// ignorableLint: the chart ships no icon, which lint reports as INFO.
func ignorableLint(msg support.Message) bool {
	return msg.Severity == support.InfoSev && strings.Contains(msg.Err.Error(), "icon is recommended")
}

// Invalid choices must fail rendering with a message naming the value, not
// render something broken: values.schema.json names enum values (the
// templates' own fail messages remain for --skip-schema-validation).
func TestRenderRejectsBadValues(t *testing.T) {
	cases := []struct {
		name string
		vals map[string]any
		want string
	}{
		{"envoy mode", m{"envoy": m{"mode": "gateway"}}, "/envoy/mode': value must be one of"},
		{"body mode", m{"envoy": m{"requestBodyMode": "STREAMED"}}, "/envoy/requestBodyMode': value must be one of"},
		{"nats mode", m{"nats": m{"mode": "cluster"}}, "/nats/mode': value must be one of"},
		{"external nats without url", m{"nats": m{"mode": "external"}}, "nats.external.url is required"},
		{"tokenizer source", m{"tokenizers": m{"source": "s3"}}, "/tokenizers/source': value must be one of"},
		{"tokenizer configmap", m{"tokenizers": m{"source": "configMap"}}, "tokenizers.configMap is required"},
		{"inference pool with envoy", m{"inferencePool": m{"enabled": true}}, "set envoy.mode=none"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := tryRender(chartDir(t), c.vals)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got error %v, want one containing %q", err, c.want)
			}
		})
	}
}
