package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/strvals"
	"sigs.k8s.io/yaml"
)

// setValues parses `--set` arguments as the helm CLI does, so the cases
// below are exactly what a user types.
func setValues(t *testing.T, sets ...string) map[string]any {
	t.Helper()
	vals := map[string]any{}
	for _, s := range sets {
		if err := strvals.ParseInto(s, vals); err != nil {
			t.Fatalf("parsing --set %s: %v", s, err)
		}
	}
	return vals
}

// values.schema.json rejects misspelt keys and wrong types at render and at
// lint time, instead of ignoring them or rendering them into the manifests.
func TestSchemaRejectsBadValues(t *testing.T) {
	cases := []struct {
		name string
		sets []string
		want string // part of the schema error
	}{
		{"misspelt key", []string{"envoy.mdoe=deployment"}, "mdoe"},
		{"unknown top-level key", []string{"replicaCount=abc"}, "replicaCount"},
		{"replica count not a number", []string{"router.replicaCount=abc"}, "replicaCount"},
		{"unknown router key", []string{"router.replicas=3"}, "replicas"},
		{"unknown nested key", []string{"nats.embedded.jetstream.enable=false"}, "enable"},
		{"envoy mode outside the enum", []string{"envoy.mode=gateway"}, "mode"},
		{"port out of range", []string{"router.ports.grpc=70000"}, "grpc"},
		{"boolean as a word", []string{"relay.enabled=yes"}, "enabled"},
		{"duration without a unit", []string{"envoy.routeTimeout=600"}, "routeTimeout"},
		{"lame duck under nats-server's minimum", []string{"nats.mode=embedded", "nats.embedded.lameDuckSeconds=10"}, "lameDuckSeconds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vals := setValues(t, c.sets...)
			_, err := tryRender(chartDir(t), vals)
			if err == nil || !strings.Contains(err.Error(), "schema") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("helm template --set %s: got error %v, want a schema error naming %q", strings.Join(c.sets, ","), err, c.want)
			}
			res := lint.AllWithKubeVersion(chartDir(t), vals, namespace, kubeVersion)
			if len(res.Messages) == 0 || !lintMentions(res, c.want) {
				t.Errorf("helm lint --set %s: got %v, want an error naming %q", strings.Join(c.sets, ","), res.Messages, c.want)
			}
		})
	}
}

func lintMentions(res support.Linter, want string) bool {
	for _, msg := range res.Messages {
		if msg.Err != nil && strings.Contains(msg.Err.Error(), want) {
			return true
		}
	}
	return false
}

// router.config is the router's own file, validated by `warmroute serve`:
// the schema lets through keys it does not know.
func TestSchemaLeavesRouterConfigFree(t *testing.T) {
	vals := setValues(t, "router.config.someFutureSetting=on", "router.config.scoring.weights.load=2")
	if _, err := tryRender(chartDir(t), vals); err != nil {
		t.Fatalf("helm template with free-form router.config: %v", err)
	}
}

// Every value set the tests render, the shipped examples and values.yaml
// itself satisfy the schema (TestLint already fails on any schema message;
// this names the file when an example drifts).
func TestSchemaAcceptsShippedValues(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(chartDir(t), "examples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("listing examples: %v (%d files)", err, len(files))
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var vals map[string]any
		if err := yaml.Unmarshal(raw, &vals); err != nil {
			t.Fatalf("parsing %s: %v", f, err)
		}
		if _, err := tryRender(chartDir(t), vals); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
	for _, vs := range valueSets {
		if _, err := tryRender(chartDir(t), vs.vals); err != nil {
			t.Errorf("value set %s: %v", vs.name, err)
		}
	}
}

// Every key the schema defines is documented in values.yaml, so the schema
// never accepts a setting the chart does not describe (the other direction,
// every values.yaml key in the schema, is the schema validating values.yaml).
func TestSchemaKeysAreInValuesYAML(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(chartDir(t), "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := yaml.Unmarshal(raw, &schema); err != nil {
		t.Fatalf("parsing values.schema.json: %v", err)
	}
	raw, err = os.ReadFile(filepath.Join(chartDir(t), "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var vals map[string]any
	if err := yaml.Unmarshal(raw, &vals); err != nil {
		t.Fatalf("parsing values.yaml: %v", err)
	}
	var walk func(path string, s, v map[string]any)
	walk = func(path string, s, v map[string]any) {
		if s["additionalProperties"] != false {
			t.Errorf("%s: the schema allows unknown keys", path)
		}
		props, _ := s["properties"].(map[string]any)
		for key, sub := range props {
			p := strings.TrimPrefix(path+"."+key, ".")
			if p == "global" {
				continue // Helm's own, for subcharts
			}
			val, ok := v[key]
			if !ok {
				t.Errorf("%s: in the schema but not in values.yaml", p)
				continue
			}
			subSchema, _ := sub.(map[string]any)
			subVal, isMap := val.(map[string]any)
			if _, nested := subSchema["properties"]; nested && isMap {
				walk(p, subSchema, subVal)
			}
		}
	}
	walk("", schema, vals)
}
