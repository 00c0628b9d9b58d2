package harness

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// Engine wheel versions whose own KV event code the interop tests run
// (events/wire/testdata/engines/engines.py names the same ones).
const (
	VLLMWheelVersion   = "0.33.0"
	SGLangWheelVersion = "0.5.23"
)

// engineWheelsDir is the project-relative cache of the engines' wheels.
const engineWheelsDir = ".cache/engine-wheels"

// EngineWheels returns the paths of the vLLM and SGLang wheels in the
// project's .cache/engine-wheels, downloading them with py's pip when
// missing (pip download --no-deps: about 375 MB, nothing installed). The
// tests read only kv_events.py out of them, so the wheels are fetched for
// one fixed platform whatever the machine: the same files everywhere.
func EngineWheels(ctx context.Context, root, py string, log io.Writer) (vllm, sglang string, err error) {
	dir := filepath.Join(root, engineWheelsDir)
	find := func() (string, string) {
		v, _ := filepath.Glob(filepath.Join(dir, "vllm-"+VLLMWheelVersion+"-*.whl"))
		s, _ := filepath.Glob(filepath.Join(dir, "sglang-"+SGLangWheelVersion+"-*.whl"))
		if len(v) == 0 || len(s) == 0 {
			return "", ""
		}
		return v[0], s[0]
	}
	if vllm, sglang = find(); vllm != "" {
		return vllm, sglang, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	cmd := exec.CommandContext(ctx, py, "-m", "pip", "download", "-q", "--disable-pip-version-check",
		"--no-deps", "--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp",
		"--platform", "manylinux_2_34_x86_64", "--platform", "manylinux_2_28_x86_64", "-d", dir,
		"vllm=="+VLLMWheelVersion, "sglang=="+SGLangWheelVersion)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return "", "", fmt.Errorf("downloading the vLLM and SGLang wheels: %w", err)
	}
	if vllm, sglang = find(); vllm == "" {
		return "", "", fmt.Errorf("pip download left no vllm-%s and sglang-%s wheels in %s", VLLMWheelVersion, SGLangWheelVersion, dir)
	}
	return vllm, sglang, nil
}
