package harness

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestFindEnvoy(t *testing.T) {
	root := t.TempDir()
	notExec := filepath.Join(root, "plain")
	if err := os.WriteFile(notExec, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	venvRoot := t.TempDir()
	installed := venvEnvoy(venvRoot)
	if err := os.MkdirAll(filepath.Dir(installed), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(installed, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		env     string
		root    string
		want    string
		wantErr error
	}{
		{name: "venv", root: venvRoot, want: installed},
		{name: "nothing installed", root: root, wantErr: ErrEnvoyNotFound},
		{name: "env wins over venv", env: "/bin/sh", root: venvRoot, want: "/bin/sh"},
		{name: "env not executable", env: notExec, root: venvRoot, wantErr: ErrEnvoyNotFound},
		{name: "env missing", env: filepath.Join(root, "nope"), root: venvRoot, wantErr: ErrEnvoyNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvoyEnv, tt.env)
			got, err := FindEnvoy(tt.root)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("FindEnvoy() = %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
