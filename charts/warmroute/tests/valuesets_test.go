package tests

// valueSet is one way of installing the chart that the tests render.
type valueSet struct {
	name string
	vals map[string]any
}

// m is shorthand for a values map.
type m = map[string]any

// testCreds is a syntactically plausible NATS credentials file (never used to
// connect).
const testCreds = `-----BEGIN NATS USER JWT-----
eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.e30.c2lnbmF0dXJl
------END NATS USER JWT------
`

// valueSets cover each choice the chart offers: Envoy as a sidecar, as a
// Deployment or absent; NATS off, external with a Secret (given or
// existing), or embedded with and without JetStream; monitoring on and off;
// tokenizer sources; the InferencePool-compatible mode; the example vLLM.
var valueSets = []valueSet{
	{"defaults", m{}},
	{"sidecar-monitoring", m{
		"monitoring": m{"serviceMonitor": m{"enabled": true}, "dashboard": m{"enabled": true}, "prometheusRule": m{"enabled": true}},
	}},
	{"envoy-deployment", m{
		"envoy":  m{"mode": "deployment", "failOpen": true, "requestBodyMode": "BUFFERED"},
		"router": m{"replicaCount": 3},
	}},
	{"external-nats-secret", m{
		"nats":       m{"mode": "external", "external": m{"url": "nats://nats.example:4222", "creds": testCreds}},
		"monitoring": m{"serviceMonitor": m{"enabled": true}},
	}},
	{"external-nats-existing-secret", m{
		"nats":  m{"mode": "external", "external": m{"url": "tls://nats.example:4222", "existingSecret": "my-nats"}},
		"envoy": m{"mode": "deployment"},
	}},
	{"embedded-nats-jetstream", m{
		"nats":       m{"mode": "embedded", "embedded": m{"replicas": 3, "jetstream": m{"storageClassName": "fast"}}},
		"monitoring": m{"serviceMonitor": m{"enabled": true}, "dashboard": m{"enabled": true}, "prometheusRule": m{"enabled": true}},
		"examples":   m{"vllm": m{"enabled": true}},
	}},
	{"embedded-nats-memory", m{
		"nats":  m{"mode": "embedded", "embedded": m{"jetstream": m{"enabled": false}}},
		"relay": m{"replay": "tcp://127.0.0.1:5558", "topic": "kv"},
	}},
	{"monitoring-off-no-pdb", m{
		"router":     m{"replicaCount": 1, "podDisruptionBudget": m{"enabled": false}},
		"monitoring": m{"serviceMonitor": m{"enabled": false}, "dashboard": m{"enabled": false}, "prometheusRule": m{"enabled": false}},
	}},
	{"tokenizers-volume", m{
		"tokenizers": m{"source": "volume", "volume": m{"persistentVolumeClaim": m{"claimName": "models", "readOnly": true}}},
		"nats":       m{"mode": "embedded"},
		"examples":   m{"vllm": m{"enabled": true}},
	}},
	{"tokenizers-configmap-sim", m{
		"tokenizers": m{"source": "configMap", "configMap": "qwen-tokenizer"},
		"nats":       m{"mode": "embedded"},
		"examples":   m{"sim": m{"enabled": true}},
	}},
	{"sim-relays-external-nats", m{
		"nats":     m{"mode": "external", "external": m{"url": "nats://nats.example:4222", "creds": testCreds}},
		"examples": m{"sim": m{"enabled": true}},
	}},
	{"tokenizers-init", m{"tokenizers": m{"source": "initContainer",
		"initContainer": m{"image": "busybox:1.37", "command": []any{"sh", "-c", "cp /src/* $TOKENIZERS_DIR/"}}}}},
	{"router-tls-separate-envoy", m{
		"envoy": m{"mode": "deployment"},
		"router": m{"config": m{"tls": m{"selfSigned": true}, "defaultPool": "m",
			"pools": []any{m{"name": "m", "endpoints": []any{"10.0.0.5:8000"}}}}},
	}},
	{"router-mtls-sidecar", m{
		"router": m{"mtls": m{"existingSecret": "envoy-mtls"}},
	}},
	{"router-mtls-envoy-deployment", m{
		"envoy":  m{"mode": "deployment"},
		"router": m{"mtls": m{"existingSecret": "envoy-mtls"}, "config": m{"tls": m{"certFile": "/c.pem", "keyFile": "/k.pem"}}},
	}},
	{"router-tls-secret", m{
		"router": m{"tls": m{"existingSecret": "router-cert"}, "mtls": m{"existingSecret": "envoy-mtls"}},
	}},
	{"router-tls-extra-volumes", m{
		"envoy": m{"mode": "deployment"},
		"router": m{"extraVolumes": []any{m{"name": "certs", "secret": m{"secretName": "my-certs"}}},
			"extraVolumeMounts": []any{m{"name": "certs", "mountPath": "/etc/certs", "readOnly": true}},
			"config":            m{"tls": m{"certFile": "/etc/certs/tls.crt", "keyFile": "/etc/certs/tls.key"}}},
	}},
	{"fallbacks-dns", m{
		"envoy":  m{"modelServers": m{"dnsName": "vllm-headless.llm.svc.cluster.local", "port": 8000}},
		"router": m{"config": m{"fallbacks": 1}},
	}},
	{"fallbacks-sim-deployment", m{
		"envoy":    m{"mode": "deployment"},
		"nats":     m{"mode": "embedded"},
		"examples": m{"sim": m{"enabled": true}},
		"router":   m{"config": m{"fallbacks": 2}},
	}},
	{"fallbacks-static", m{
		"router": m{"config": m{"fallbacks": 1, "defaultPool": "m",
			"pools": []any{m{"name": "m", "endpoints": []any{"10.0.0.5:8000", "10.0.0.6:8000"}}}}},
	}},
	{"inference-pool", m{
		"envoy":         m{"mode": "none"},
		"inferencePool": m{"enabled": true},
	}},
}
