#!/usr/bin/env python3
"""Writes a tiny random-weight Qwen 3 model next to the real Qwen 3
tokenizer files, for `make e2e-vllm`: 2 layers, hidden size 128, the real
vocabulary (151936), so vLLM tokenizes exactly as for Qwen 3 and serves a few
requests per second on a CPU. Its outputs are noise; only prompts and their
KV cache blocks matter to the test.

Usage: python e2e/vllm/make_model.py TOKENIZER_DIR OUT_DIR
"""
import os
import shutil
import sys

import torch
from transformers import Qwen3Config, Qwen3ForCausalLM


def main():
    tok, out = sys.argv[1], sys.argv[2]
    if os.path.exists(os.path.join(out, "config.json")):
        return
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    cfg = Qwen3Config(vocab_size=151936, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, head_dim=32,
                      max_position_embeddings=4096, tie_word_embeddings=True, torch_dtype="bfloat16")
    Qwen3ForCausalLM(cfg).to(torch.bfloat16).save_pretrained(out)
    for f in os.listdir(tok):
        shutil.copy(os.path.join(tok, f), out)


if __name__ == "__main__":
    main()
