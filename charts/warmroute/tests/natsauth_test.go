package tests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	natsserver "github.com/nats-io/nats-server/v2/server"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/warmroute/warmroute/router"
)

// secretItems returns the keys a pod spec mounts from secret.
func secretItems(spec corev1.PodSpec, secret string) []string {
	var keys []string
	for _, v := range spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == secret {
			for _, it := range v.Secret.Items {
				keys = append(keys, it.Key)
			}
		}
	}
	return keys
}

// With nats.embedded.auth.existingSecret the NATS server includes the
// Secret's authorization block, the router connects with its NKey seed and
// the relays with theirs, and each pod mounts only its own key.
func TestEmbeddedNATSAuthorization(t *testing.T) {
	vals := m{"nats": m{"mode": "embedded", "embedded": m{"auth": m{"existingSecret": "nats-auth"}}},
		"examples": m{"sim": m{"enabled": true}}}
	docs := render(t, vals)
	cm := decodeInto[corev1.ConfigMap](t, find(t, docs, "ConfigMap", releaseName+"-warmroute-nats"))
	if !strings.Contains(cm.Data["nats.conf"], `include "auth/auth.conf"`) {
		t.Errorf("nats.conf does not include the authorization block:\n%s", cm.Data["nats.conf"])
	}
	sts := decodeInto[appsv1.StatefulSet](t, find(t, docs, "StatefulSet", releaseName+"-warmroute-nats"))
	if got := secretItems(sts.Spec.Template.Spec, "nats-auth"); !slices.Equal(got, []string{"auth.conf"}) {
		t.Errorf("NATS mounts %v of the Secret, want [auth.conf]", got)
	}
	if !slices.ContainsFunc(sts.Spec.Template.Spec.Containers[0].VolumeMounts, func(vm corev1.VolumeMount) bool {
		return vm.MountPath == "/etc/nats/auth"
	}) {
		t.Error("NATS does not mount the Secret where nats.conf includes it")
	}

	cfg, err := router.Parse([]byte(renderedServeConfig(t, docs)), "serve.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Events.NKeySeedFile != "/etc/warmroute/nats-auth/router.nk" || cfg.Events.CredsFile != "" {
		t.Errorf("router events nkeySeedFile %q credsFile %q", cfg.Events.NKeySeedFile, cfg.Events.CredsFile)
	}
	if err := cfg.Validate(); err != nil {
		t.Error(err)
	}
	dep := decodeInto[appsv1.Deployment](t, find(t, docs, "Deployment", releaseName+"-warmroute-router"))
	if got := secretItems(dep.Spec.Template.Spec, "nats-auth"); !slices.Equal(got, []string{"router.nk"}) {
		t.Errorf("router mounts %v of the Secret, want [router.nk]", got)
	}
	sim := decodeInto[appsv1.Deployment](t, find(t, docs, "Deployment", releaseName+"-warmroute-sim"))
	if got := secretItems(sim.Spec.Template.Spec, "nats-auth"); !slices.Equal(got, []string{"relay.nk"}) {
		t.Errorf("relay pod mounts %v of the Secret, want [relay.nk]", got)
	}
	var relay *corev1.Container
	for i, c := range sim.Spec.Template.Spec.Containers {
		if c.Name == "warmroute-relay" {
			relay = &sim.Spec.Template.Spec.Containers[i]
		}
	}
	if relay == nil || !slices.Contains(relay.Args, "--nats-nkey=/etc/warmroute/nats-auth/relay.nk") {
		t.Fatalf("relay args lack its NKey seed: %v", relay)
	}

	// Without the Secret: no authorization and nothing mounted.
	plain := render(t, m{"nats": m{"mode": "embedded"}})
	cm = decodeInto[corev1.ConfigMap](t, find(t, plain, "ConfigMap", releaseName+"-warmroute-nats"))
	if strings.Contains(cm.Data["nats.conf"], "include") {
		t.Errorf("nats.conf includes an authorization block without the Secret")
	}
}

// Every value set's rendered nats.conf (and one with the authorization
// include) is accepted by nats-server's own configuration parser, as the
// StatefulSet's server reads it at start-up: a value it refuses (such as a
// lame_duck_duration under 30s) would crash-loop the embedded NATS.
func TestRenderedNATSConfigLoads(t *testing.T) {
	sets := append(slices.Clone(valueSets), valueSet{"embedded-nats-auth",
		m{"nats": m{"mode": "embedded", "embedded": m{"auth": m{"existingSecret": "nats-auth"}}}}})
	t.Setenv("POD_NAME", "wr-warmroute-nats-0")
	checked := 0
	for _, vs := range sets {
		docs := render(t, vs.vals)
		i := slices.IndexFunc(docs, func(d doc) bool { return d.Kind == "ConfigMap" && d.Name == releaseName+"-warmroute-nats" })
		if i < 0 {
			continue
		}
		checked++
		t.Run(vs.name, func(t *testing.T) {
			cm := decodeInto[corev1.ConfigMap](t, docs[i])
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "nats.conf"), []byte(cm.Data["nats.conf"]), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(dir, "auth"), 0o700); err != nil {
				t.Fatal(err)
			}
			auth := "authorization { users = [ {user: a, password: b} ] }\n"
			if err := os.WriteFile(filepath.Join(dir, "auth", "auth.conf"), []byte(auth), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := natsserver.ProcessConfigFile(filepath.Join(dir, "nats.conf")); err != nil {
				t.Errorf("nats-server refuses the rendered nats.conf: %v\n%s", err, cm.Data["nats.conf"])
			}
		})
	}
	if checked < 3 {
		t.Fatalf("only %d value sets render the NATS ConfigMap", checked)
	}
}
