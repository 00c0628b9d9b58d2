package configfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/warmroute/warmroute/internal/configfile"
	"github.com/warmroute/warmroute/router"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		wantErr string // "" for success; else the text after "parsing config PATH"
	}{
		{"valid", "grpcAddr: :9002\npools:\n  - name: m\n    endpoints: [10.0.0.1:8000]\nttl:\n  static: 2s\n", ""},
		{"empty", "", ""},
		{"key in another case, as encoding/json", "GRPCAddr: :9002\n", ""},
		{"unknown top-level key", "grpcAddr: :9002\nadminAdr: :9090\n", `:2: unknown field "adminAdr"`},
		{"unknown nested key", "ttl:\n  mode: static\n  statik: 2s\n", `:3: unknown field "ttl.statik"`},
		{"unknown key in a list item", "pools:\n  - name: m\n  - name: n\n    endpoint: [a]\n", `:4: unknown field "pools[1].endpoint"`},
		{"wrong type", "pools:\n  - name: m\nfallbacks: many\n", `:3: fallbacks: cannot use string as int`},
		{"wrong type in a list", "pools:\n  - name: m\n    endpoints: 10.0.0.1:8000\n", `:3: pools[0].endpoints: cannot use string as []scorer.PoolEndpoint`},
		// A pool decodes itself (endpoint entries may be objects); its
		// FileSchema keeps the line and key of a problem inside it.
		{"bad role in an endpoint entry", "pools:\n  - name: m\n    endpoints:\n      - 10.0.0.1:8000\n      - {address: 10.0.0.2:8000, role: prefiller}\n",
			`:5: pools[0].endpoints[1]: pool endpoint: want "ip:port" or {address, role}: unknown endpoint role "prefiller"`},
		{"unknown key in an endpoint entry", "pools:\n  - name: m\n    endpoints:\n      - {address: 10.0.0.2:8000, rol: prefill}\n",
			`:4: pools[0].endpoints[0]: pool endpoint: want "ip:port" or {address, role}: json: unknown field "rol"`},
		{"bad duration", "ttl:\n  static: soon\n", `:2: ttl.static: `},
		{"duplicate key", "grpcAddr: :9002\nttl:\n  static: 2s\n  static: 3s\n", `:4: duplicate key "static" (first at line 3)`},
		{"duplicate top-level key", "ttl: {}\nfallbacks: 1\nttl: {}\n", `:3: duplicate key "ttl" (first at line 1)`},
		{"bad syntax", "grpcAddr: :9002\nttl:\n  static: [2s\n", `:3: did not find expected ',' or ']'`},
		{"bad indentation", "pools:\n  - name: m\n endpoints: []\n", `:2: did not find expected key`},
		{"tab indentation", "ttl:\n\tstatic: 2s\n", `:2: found character that cannot start any token`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "router.yaml")
			if err := os.WriteFile(path, []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
			var cfg router.Config
			err := configfile.Decode(path, &cfg)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				var want router.Config
				if err := yaml.UnmarshalStrict([]byte(tt.file), &want); err != nil {
					t.Fatalf("sigs.k8s.io/yaml rejects what Decode accepts: %v", err)
				}
				a, _ := yaml.Marshal(cfg)
				b, _ := yaml.Marshal(want)
				if string(a) != string(b) {
					t.Errorf("decoded\n%s\nwant\n%s", a, b)
				}
				return
			}
			prefix := "parsing config " + path + tt.wantErr
			if err == nil || !strings.HasPrefix(err.Error(), prefix) {
				t.Fatalf("error %v, want one starting %q", err, prefix)
			}
			// Same strictness as before: sigs.k8s.io/yaml rejects it too.
			if yaml.UnmarshalStrict([]byte(tt.file), &cfg) == nil {
				t.Errorf("sigs.k8s.io/yaml accepts what Decode rejects")
			}
		})
	}
}

func TestDecodeUnreadable(t *testing.T) {
	var cfg router.Config
	err := configfile.Decode(filepath.Join(t.TempDir(), "missing.yaml"), &cfg)
	if err == nil || !strings.HasPrefix(err.Error(), "reading config: ") {
		t.Errorf("error %v, want reading config: ...", err)
	}
}
