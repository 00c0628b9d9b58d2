package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmroute/warmroute/internal/cli"
)

func TestBadFlagsAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-seeds", "0"}, {"-parallel", "0"}, {"-scale", "0"}, {"-scale", "1.5"}, {"-deadline", "0s"},
		{"-regimes", "nope"}, {"-policies", "static-3s"}, {"stray"}, {"-nope"},
	} {
		err := run(context.Background(), args, io.Discard, io.Discard)
		var ue *cli.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%q: got %v, want a usage error", args, err)
		}
	}
}

func TestTinyRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.json")
	var out bytes.Buffer
	err := run(context.Background(), []string{"-regimes", "fast", "-policies", "static-2s,adaptive", "-seeds", "2",
		"-scale", "0.05", "-json", path}, &out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| fast | static-2s |", "| fast | adaptive |", "fast: adaptive within"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Cells []struct {
			Regime, Policy string
			Runs           []struct{ Seed uint64 }
		}
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Cells) != 2 || len(rep.Cells[0].Runs) != 2 {
		t.Errorf("json: %+v", rep)
	}
}
