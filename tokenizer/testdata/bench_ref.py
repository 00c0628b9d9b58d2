#!/usr/bin/env python3
"""Reference throughput: Hugging Face tokenizers (Rust, via PyPI) on the same
texts as BenchmarkEncode, single-threaded (RAYON_NUM_THREADS=1, one encode
call at a time). Prints one line per case in `go test -bench` style so both
can be read side by side; nothing is subtracted from the reference's time.

Usage: RAYON_NUM_THREADS=1 python3 tokenizer/testdata/bench_ref.py [family ...]
"""
import gzip
import json
import os
import sys
import time

os.environ.setdefault("RAYON_NUM_THREADS", "1")
from tokenizers import Tokenizer  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, "..", "..", ".cache", "tokenizers")
FAMILIES = ["llama3", "qwen3", "deepseek_v3", "gptoss", "gemma3", "llama2"]
SIZES = [("1KB", 1 << 10), ("10KB", 10 << 10), ("100KB", 100 << 10), ("1MB", 1 << 20)]


def bench_text(texts, kind, n):
    parts = [s for s in texts if kind == "mixed" or len(s.encode()) > 2000]
    all_ = "\n".join(parts)
    while len(all_.encode()) < n:
        all_ = all_ + "\n" + all_
    return all_.encode()[:n].decode("utf-8", "ignore")


def measure(tok, text, min_time=0.3):
    n, start = 0, time.perf_counter()
    while True:
        ids = tok.encode(text, add_special_tokens=False).ids
        n += 1
        el = time.perf_counter() - start
        if el >= min_time:
            return el / n, len(ids)


def main():
    texts = json.load(gzip.open(os.path.join(HERE, "golden.json.gz"), "rt", encoding="utf-8"))["texts"]
    fams = sys.argv[1:] or FAMILIES
    for fam in fams:
        tok = Tokenizer.from_file(os.path.join(CACHE, fam, "tokenizer.json"))
        for kind in ["prose", "mixed"]:
            for name, n in SIZES:
                text = bench_text(texts, kind, n)
                per, ntok = measure(tok, text)
                nbytes = len(text.encode())
                print(f"Reference/{fam}/{kind}/{name}\t{per*1e9:12.0f} ns/op\t{nbytes/per/1e6:8.2f} MB/s\t{ntok/per:12.0f} tokens/s")


if __name__ == "__main__":
    main()
