#!/usr/bin/env python3
"""Go tokenizer vs Hugging Face tokenizers, measured interleaved.

Each round runs the Go benchmark for one family (a `go test -c` binary,
GOMAXPROCS=1), then the reference on the same texts in this process
(RAYON_NUM_THREADS=1, one encode call at a time), family after family, so
both see the same load on a shared machine. Both report wall and process
CPU time per encode; the summary gives min / median / max over rounds and
the range of the per-round CPU ratio (reference / Go).

Usage:
  go test -c -o /tmp/tokenizer.test ./tokenizer
  RAYON_NUM_THREADS=1 python3 tokenizer/testdata/bench_vs_ref.py /tmp/tokenizer.test \
      [--rounds 3] [--cases prose/100KB,prose/1MB] [--cold] [family ...]
Without --cold the texts repeat, so both word caches are warm after the
first encode; --cold empties both before every encode.
Run from the repository root, in a venv with tokenizers==0.23.3.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

os.environ.setdefault("RAYON_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_ref import CACHE, HERE, SIZES, bench_text  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

import gzip  # noqa: E402
import json  # noqa: E402


def go_round(binary, fam, cases, cold):
    kinds = sorted({c.split("/")[0] for c in cases})
    sizes = sorted({c.split("/")[1] for c in cases})
    pat = ("^BenchmarkEncodeCold$" if cold else "^BenchmarkEncode$") + "/^%s$/^(%s)$/^(%s)$" % (fam, "|".join(kinds), "|".join(sizes))
    env = dict(os.environ, GOMAXPROCS="1")
    out = subprocess.run([binary, "-test.run", "^$", "-test.bench", pat, "-test.benchtime", "0.5s"],
                         cwd=os.path.join(HERE, ".."), env=env, capture_output=True, text=True, check=True).stdout
    res = {}
    for line in out.splitlines():
        m = re.match(r"BenchmarkEncode(?:Cold)?/[^/]+/(\S+?)(-\d+)?\s+\d+\s+([\d.]+) ns/op.*?([\d.]+) cpu-ns/op", line)
        if m:
            res[m.group(1)] = (float(m.group(3)), float(m.group(4)))
    return res


def ref_round(tok, text, cold, min_time=0.5):
    n, w0, c0 = 0, time.perf_counter(), time.process_time()
    while True:
        if cold:
            tok.model._clear_cache()
        tok.encode(text, add_special_tokens=False)
        n += 1
        w = time.perf_counter() - w0
        if w >= min_time:
            return w / n * 1e9, (time.process_time() - c0) / n * 1e9


def spread(xs, scale=1e6):
    return "%.2f / %.2f / %.2f" % (min(xs) / scale, statistics.median(xs) / scale, max(xs) / scale)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary", help="go test -c binary, or LABEL=PATH,LABEL=PATH to interleave several")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cases", default="prose/100KB,prose/1MB")
    ap.add_argument("--cold", action="store_true", help="empty both word caches before every encode")
    ap.add_argument("families", nargs="*", default=["llama3", "qwen3", "gptoss", "gemma3"])
    a = ap.parse_args()
    binaries = []
    for spec in a.binary.split(","):
        label, _, path = spec.rpartition("=")
        binaries.append((label or "Go", os.path.abspath(path)))
    cases = a.cases.split(",")
    sizes = dict(SIZES)
    texts = json.load(gzip.open(os.path.join(HERE, "golden.json.gz"), "rt", encoding="utf-8"))["texts"]
    toks = {f: Tokenizer.from_file(os.path.join(CACHE, f, "tokenizer.json")) for f in a.families}
    inputs = {c: bench_text(texts, c.split("/")[0], sizes[c.split("/")[1]]) for c in cases}
    go, ref = {}, {}
    for r in range(a.rounds):
        for fam in a.families:
            for label, binary in binaries:
                for c, v in go_round(binary, fam, cases, a.cold).items():
                    go.setdefault((label, fam, c), []).append(v)
            for c in cases:
                ref.setdefault((fam, c), []).append(ref_round(toks[fam], inputs[c], a.cold))
        print("round %d done" % (r + 1), file=sys.stderr)
    print("min / median / max over %d rounds%s" % (a.rounds, ", word caches emptied before every encode" if a.cold else ""))
    print("| case | build | Go wall ms | Go CPU ms | reference wall ms | reference CPU ms | CPU ratio (per round) |")
    print("|---|---|---|---|---|---|---|")
    for fam in a.families:
        for c in cases:
            h = ref[(fam, c)]
            for label, _ in binaries:
                g = go.get((label, fam, c), [])
                if not g:
                    continue
                ratios = [hr[1] / gr[1] for gr, hr in zip(g, h)]
                print("| %s/%s | %s | %s | %s | %s | %s | %.1f-%.1fx (median %.1fx) |" % (
                    fam, c, label, spread([x[0] for x in g]), spread([x[1] for x in g]),
                    spread([x[0] for x in h]), spread([x[1] for x in h]),
                    min(ratios), max(ratios), statistics.median(ratios)))


if __name__ == "__main__":
    main()
