package tests

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/warmroute/warmroute/router"
)

// podContainer returns the named container of a pod spec, or fails.
func podContainer(t *testing.T, pod corev1.PodSpec, name string) corev1.Container {
	t.Helper()
	for _, c := range pod.Containers {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("pod has no container %s", name)
	return corev1.Container{}
}

func volumeNamed(pod corev1.PodSpec, name string) *corev1.Volume {
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == name {
			return &pod.Volumes[i]
		}
	}
	return nil
}

func mountAt(c corev1.Container, path string) *corev1.VolumeMount {
	for i := range c.VolumeMounts {
		if c.VolumeMounts[i].MountPath == path {
			return &c.VolumeMounts[i]
		}
	}
	return nil
}

// router.extraVolumes go into the router pod and router.extraVolumeMounts
// into the router container only, beside the chart's own.
func TestRouterExtraVolumes(t *testing.T) {
	docs := render(t, m{"router": m{
		"extraVolumes": []any{m{"name": "certs", "secret": m{"secretName": "my-certs"}},
			m{"name": "scratch", "emptyDir": m{}}},
		"extraVolumeMounts": []any{m{"name": "certs", "mountPath": "/etc/certs", "readOnly": true}},
	}})
	pod := routerPod(t, docs)
	if v := volumeNamed(pod, "certs"); v == nil || v.Secret == nil || v.Secret.SecretName != "my-certs" {
		t.Errorf("volume certs = %+v, want the Secret my-certs", v)
	}
	if volumeNamed(pod, "scratch") == nil || volumeNamed(pod, "config") == nil {
		t.Errorf("volumes %+v lack scratch or the chart's config", pod.Volumes)
	}
	rc := podContainer(t, pod, "router")
	if mt := mountAt(rc, "/etc/certs"); mt == nil || mt.Name != "certs" || !mt.ReadOnly {
		t.Errorf("router mount at /etc/certs = %+v", mt)
	}
	if mountAt(rc, "/etc/warmroute") == nil {
		t.Error("the chart's config mount is gone")
	}
	if mountAt(podContainer(t, pod, "envoy"), "/etc/certs") != nil {
		t.Error("the Envoy sidecar got the router's extra mount")
	}
}

// router.tls.existingSecret: the Secret's pair is mounted read-only and is
// the router's serving certificate (no self-signed one); with router.mtls
// the CA is added; Envoy then speaks TLS to the router and the liveness
// probe moves to the plain-HTTP admin port.
func TestRouterTLSFromSecret(t *testing.T) {
	pair := router.TLSConfig{CertFile: "/etc/warmroute/tls/tls.crt", KeyFile: "/etc/warmroute/tls/tls.key"}
	withCA := pair
	withCA.ClientCAFile = "/etc/warmroute/mtls/ca.crt"
	cases := []struct {
		name string
		vals map[string]any
		want router.TLSConfig
	}{
		{"serving certificate", m{"router": m{"tls": m{"existingSecret": "router-cert"}}}, pair},
		{"with mutual TLS", m{"router": m{"tls": m{"existingSecret": "router-cert"}, "mtls": m{"existingSecret": "envoy-mtls"}}}, withCA},
		{"InferencePool mode uses it instead of self-signed", m{"envoy": m{"mode": "none"}, "inferencePool": m{"enabled": true},
			"router": m{"tls": m{"existingSecret": "router-cert"}}}, pair},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			docs := render(t, c.vals)
			cfg, err := router.Parse([]byte(renderedServeConfig(t, docs)), "serve.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if cfg.TLS != c.want {
				t.Errorf("tls = %+v, want %+v", cfg.TLS, c.want)
			}
			pod := routerPod(t, docs)
			v := volumeNamed(pod, "tls")
			if v == nil || v.Secret == nil || v.Secret.SecretName != "router-cert" {
				t.Fatalf("volume tls = %+v, want the Secret router-cert", v)
			}
			var keys []string
			for _, it := range v.Secret.Items {
				keys = append(keys, it.Key)
			}
			if !reflect.DeepEqual(keys, []string{"tls.crt", "tls.key"}) {
				t.Errorf("tls volume keys %v, want tls.crt and tls.key", keys)
			}
			rc := podContainer(t, pod, "router")
			if mt := mountAt(rc, "/etc/warmroute/tls"); mt == nil || mt.Name != "tls" || !mt.ReadOnly {
				t.Errorf("router mount at /etc/warmroute/tls = %+v", mt)
			}
			if p := rc.LivenessProbe; p == nil || p.HTTPGet == nil {
				t.Errorf("liveness probe %+v, want HTTP on the admin port (kubelet gRPC probes cannot speak TLS)", p)
			}
			if hasDoc(docs, "ConfigMap", releaseName+"-warmroute-envoy") && !strings.Contains(renderedEnvoyConfig(t, docs), "UpstreamTlsContext") {
				t.Error("Envoy does not speak TLS to the router")
			}
		})
	}
}

func TestRouterTLSSecretAndFilesConflict(t *testing.T) {
	_, err := tryRender(chartDir(t), m{"router": m{"tls": m{"existingSecret": "s"}, "config": m{"tls": m{"certFile": "/c.pem", "keyFile": "/k.pem"}}}})
	if err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("got %v, want the two certificate sources refused", err)
	}
}
