package configfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/warmroute/warmroute/internal/configfile"
	"github.com/warmroute/warmroute/router"
)

// FuzzDecode: Decode never panics and accepts exactly what
// sigs.k8s.io/yaml.UnmarshalStrict accepts.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"grpcAddr: :9002\npools:\n  - name: m\n    endpoints: [10.0.0.1:8000]\nttl:\n  static: 2s\n",
		"ttl:\n  mode: static\n  statik: 2s\n",
		"pools:\n  - name: m\nfallbacks: many\n",
		"grpcAddr: :9002\nttl:\n  static: 2s\n  static: 3s\n",
		"grpcAddr: :9002\nttl:\n  static: [2s\n",
		"base: &b {name: m}\npools: [*b]\n",
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, file string) {
		path := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		var got, want router.Config
		err := configfile.Decode(path, &got)
		wantErr := yaml.UnmarshalStrict([]byte(file), &want)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("Decode: %v; sigs.k8s.io/yaml: %v", err, wantErr)
		}
	})
}
