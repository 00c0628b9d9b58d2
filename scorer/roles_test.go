package scorer

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/warmroute/warmroute/internal/configfile"
)

func TestRoleOf(t *testing.T) {
	tests := []struct {
		name string
		want Role
		err  bool
	}{
		{"", RoleBoth, false}, {"both", RoleBoth, false}, {"prefill-decode", RoleBoth, false},
		{"encode-prefill-decode", RoleBoth, false}, {"prefill", RolePrefill, false},
		{"encode-prefill", RolePrefill, false}, {"decode", RoleDecode, false},
		{"encode", RoleBoth, true}, {"Prefill", RoleBoth, true}, {"prefil", RoleBoth, true}, {" decode", RoleBoth, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := RoleOf(tt.name)
			if got != tt.want || (err != nil) != tt.err {
				t.Fatalf("RoleOf(%q) = %v, %v; want %v, error %v", tt.name, got, err, tt.want, tt.err)
			}
			if err != nil && (!errors.Is(err, ErrUnknownRole) || !strings.Contains(err.Error(), "want prefill, decode or both")) {
				t.Fatalf("error %q does not say what is accepted", err)
			}
		})
	}
}

type poolsFile struct {
	Pools []PoolConfig `json:"pools"`
}

// TestPoolEndpointEntries: entries are "ip:port" or {address, role}, in the
// same list; anything else is refused with a clear error.
func TestPoolEndpointEntries(t *testing.T) {
	tests := []struct {
		name, yaml string
		endpoints  []string
		roles      map[string]Role
		err        string
	}{
		{name: "plain strings stay as they were", yaml: "pools:\n- name: m\n  endpoints: [10.0.0.1:8000, 10.0.0.2:8000]\n",
			endpoints: []string{"10.0.0.1:8000", "10.0.0.2:8000"}},
		{name: "mixed entries with roles", yaml: "pools:\n- name: m\n  endpoints:\n  - 10.0.0.1:8000\n  - {address: 10.0.0.2:8000, role: prefill}\n  - {address: 10.0.0.3:8000, role: decode}\n  - {address: 10.0.0.4:8000, role: both}\n",
			endpoints: []string{"10.0.0.1:8000", "10.0.0.2:8000", "10.0.0.3:8000", "10.0.0.4:8000"},
			roles:     map[string]Role{"10.0.0.2:8000": RolePrefill, "10.0.0.3:8000": RoleDecode}},
		{name: "llm-d label values", yaml: "pools:\n- name: m\n  endpoints:\n  - {address: 10.0.0.2:8000, role: encode-prefill}\n  - {address: 10.0.0.3:8000, role: prefill-decode}\n",
			endpoints: []string{"10.0.0.2:8000", "10.0.0.3:8000"}, roles: map[string]Role{"10.0.0.2:8000": RolePrefill}},
		{name: "unknown role", yaml: "pools:\n- name: m\n  endpoints:\n  - {address: 10.0.0.2:8000, role: prefiller}\n",
			err: `unknown endpoint role "prefiller": want prefill, decode or both`},
		{name: "unknown entry key", yaml: "pools:\n- name: m\n  endpoints:\n  - {address: 10.0.0.2:8000, rol: prefill}\n",
			err: `unknown field "rol"`},
		{name: "entry without address", yaml: "pools:\n- name: m\n  endpoints:\n  - {role: prefill}\n",
			err: "address is required"},
		{name: "unknown pool key still refused", yaml: "pools:\n- name: m\n  endpoint: [10.0.0.1:8000]\n",
			err: `test.yaml:3: unknown field "pools[0].endpoint"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f poolsFile
			err := configfile.DecodeBytes([]byte(tt.yaml), "test.yaml", &f)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("decode error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p := f.Pools[0]
			if !slices.Equal(p.Endpoints, tt.endpoints) || !maps.Equal(p.Roles, tt.roles) {
				t.Fatalf("endpoints %v roles %v, want %v %v", p.Endpoints, p.Roles, tt.endpoints, tt.roles)
			}
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			var back PoolConfig
			if err := json.Unmarshal(b, &back); err != nil || !slices.Equal(back.Endpoints, p.Endpoints) || !maps.Equal(back.Roles, p.Roles) {
				t.Fatalf("round trip through %s: %+v, %v", b, back, err)
			}
		})
	}
}

func TestValidateRoles(t *testing.T) {
	tests := []struct {
		name string
		pool PoolConfig
		err  string
	}{
		{name: "role of a missing endpoint", pool: PoolConfig{Name: "m", Endpoints: []string{"10.0.0.1:8000"},
			Roles: map[string]Role{"10.0.0.9:8000": RolePrefill}}, err: `role for "10.0.0.9:8000", which is not one of the pool's endpoints`},
		{name: "roles with an inferencePool", pool: PoolConfig{Name: "m", InferencePool: "p",
			Roles: map[string]Role{"10.0.0.9:8000": RolePrefill}}, err: "llm-d.ai/role label"},
		{name: "out of range", pool: PoolConfig{Name: "m", Endpoints: []string{"10.0.0.1:8000"},
			Roles: map[string]Role{"10.0.0.1:8000": Role(9)}}, err: "unknown endpoint role 9"},
		{name: "fine", pool: PoolConfig{Name: "m", Endpoints: []string{"10.0.0.1:8000", "10.0.0.2:8000"},
			Roles: map[string]Role{"10.0.0.1:8000": RolePrefill}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Config{Pools: []PoolConfig{tt.pool}}.Validate()
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("Validate = %v, want %q", err, tt.err)
			}
		})
	}
}

// FuzzPoolConfigJSON: any input either fails to decode or round-trips.
func FuzzPoolConfigJSON(f *testing.F) {
	f.Add(`{"name":"m","endpoints":["10.0.0.1:8000",{"address":"10.0.0.2:8000","role":"prefill"}]}`)
	f.Add(`{"name":"m","endpoints":[{"address":"a","role":"x"}]}`)
	f.Add(`{"name":"m","endpoints":[1]}`)
	f.Fuzz(func(t *testing.T, in string) {
		var p PoolConfig
		if json.Unmarshal([]byte(in), &p) != nil {
			return
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("marshal of a decoded pool: %v", err)
		}
		var back PoolConfig
		if err := json.Unmarshal(b, &back); err != nil || !slices.Equal(back.Endpoints, p.Endpoints) || !maps.Equal(back.Roles, p.Roles) {
			t.Fatalf("round trip of %s through %s: %+v, %v", in, b, back, err)
		}
	})
}
