package tests

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

const natsPidFile = "/var/run/nats/nats.pid"

// mapInFile replaces every podPath in the file at path with dir, as the
// pod's mount of a volume at podPath would place it.
func mapInFile(t *testing.T, path, podPath, dir string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(b), podPath, dir)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// natsPod renders the chart's embedded NATS with vals added and returns its
// pod spec and rendered nats.conf.
func natsPod(t *testing.T, vals m) (corev1.PodSpec, string) {
	t.Helper()
	docs := render(t, m{"nats": m{"mode": "embedded", "embedded": vals}})
	sts := decodeInto[appsv1.StatefulSet](t, find(t, docs, "StatefulSet", releaseName+"-warmroute-nats"))
	cm := decodeInto[corev1.ConfigMap](t, find(t, docs, "ConfigMap", releaseName+"-warmroute-nats"))
	return sts.Spec.Template.Spec, cm.Data["nats.conf"]
}

// On stop the embedded NATS goes into lame duck mode (its preStop signals
// it through the pid file the config names, on a writable volume) and the
// pod's grace period outlasts the lame duck duration and its grace.
func TestNATSLameDuckOnStop(t *testing.T) {
	for _, tc := range []struct {
		name    string
		vals    m
		seconds int
	}{
		{"defaults", m{}, 30},
		{"longer lame duck", m{"lameDuckSeconds": 90}, 90},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod, conf := natsPod(t, tc.vals)
			for _, want := range []string{"pid_file: " + natsPidFile, "lame_duck_duration: " + strconv.Itoa(tc.seconds) + "s", "lame_duck_grace_period: 10s"} {
				if !strings.Contains(conf, want) {
					t.Errorf("nats.conf lacks %q:\n%s", want, conf)
				}
			}
			if g := pod.TerminationGracePeriodSeconds; g == nil || int(*g) <= tc.seconds+10 {
				t.Errorf("terminationGracePeriodSeconds %v, want more than lame duck %ds + 10s grace", g, tc.seconds)
			}
			c := pod.Containers[0]
			want := []string{"nats-server", "--signal", "ldm=" + natsPidFile}
			if l := c.Lifecycle; l == nil || l.PreStop == nil || l.PreStop.Exec == nil || !slices.Equal(l.PreStop.Exec.Command, want) {
				t.Fatalf("nats preStop %+v, want exec %q", c.Lifecycle, want)
			}
			i := slices.IndexFunc(c.VolumeMounts, func(vm corev1.VolumeMount) bool { return vm.MountPath == filepath.Dir(natsPidFile) })
			if i < 0 || c.VolumeMounts[i].ReadOnly {
				t.Fatalf("no writable volume at %s: %+v", filepath.Dir(natsPidFile), c.VolumeMounts)
			}
			v := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == c.VolumeMounts[i].Name })
			if v < 0 || pod.Volumes[v].EmptyDir == nil {
				t.Fatalf("volume %q is not an emptyDir: %+v", c.VolumeMounts[i].Name, pod.Volumes)
			}
		})
	}
}

// The real nats-server, on the rendered config, with the preStop command
// run as the kubelet would: its client is told of lame duck mode, and the
// SIGTERM that follows the hook does not stop the server at once.
func TestNATSPreStopEntersLameDuck(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs nats-server")
	}
	server := filepath.Join(t.TempDir(), "nats-server")
	build := exec.Command("go", "build", "-o", server, "github.com/nats-io/nats-server/v2")
	build.Dir = repoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building nats-server: %v\n%s", err, out)
	}
	ports := freePorts(t, 2)
	_, conf := natsPod(t, m{"port": ports[0], "monitorPort": ports[1]})
	dir := t.TempDir()
	run, data := filepath.Join(dir, "run"), filepath.Join(dir, "data")
	for _, d := range []string{run, data} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	confPath := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	mapInFile(t, confPath, filepath.Dir(natsPidFile), run)
	mapInFile(t, confPath, "store_dir: /data", "store_dir: "+data)
	t.Setenv("POD_NAME", "wr-warmroute-nats-0")
	srv := start(t, "nats", server, "--config", confPath)
	pidFile := filepath.Join(run, filepath.Base(natsPidFile))
	waitHTTP(t, localURL(ports[1], "/healthz"), 30*time.Second)
	lameDuck := make(chan struct{}, 1)
	nc, err := nats.Connect(fmt.Sprintf("nats://127.0.0.1:%d", ports[0]), nats.LameDuckModeHandler(func(*nats.Conn) {
		select {
		case lameDuck <- struct{}{}:
		default:
		}
	}))
	if err != nil {
		t.Fatalf("connecting to the rendered NATS: %v", err)
	}
	defer nc.Close()
	if _, err := os.Stat(pidFile); err != nil {
		t.Fatalf("the server wrote no pid file where the hook reads it: %v", err)
	}
	// The preStop command, with the pod's path mapped to the test's.
	hook := exec.Command(server, "--signal", "ldm="+pidFile)
	if out, err := hook.CombinedOutput(); err != nil {
		t.Fatalf("preStop %q: %v\n%s", hook.Args, err, out)
	}
	select {
	case <-lameDuck:
	case <-time.After(15 * time.Second):
		t.Fatal("the client was not told of lame duck mode after the preStop hook")
	}
	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // a server that obeyed SIGTERM would be gone by now
	resp, err := http.Get(localURL(ports[1], "/varz"))
	if err != nil {
		t.Fatalf("the server stopped on the SIGTERM after the hook instead of finishing lame duck mode: %v", err)
	}
	resp.Body.Close()
}
