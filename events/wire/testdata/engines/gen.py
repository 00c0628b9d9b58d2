"""Writes KV event payloads encoded by the engines' own event classes.

The classes come from the engines' wheels, not from a re-implementation: the
script reads vllm/distributed/kv_events.py and
sglang/srt/disaggregation/kv_events.py straight out of the wheel files and
executes them with their package-internal imports stubbed (only the msgspec
Struct definitions are used; the stubs stand in for loggers, network helpers
and config models the publishers need). Needs msgspec and pyzmq (the relay's
interop venv has both).

    pip download vllm==0.33.0 sglang==0.5.23 --no-deps -d DIR
    python gen.py DIR/vllm-0.33.0-*.whl DIR/sglang-0.5.23-*.whl

Each payload is written as NAME.msgpack next to this script; the Go test
TestEnginePayloads (engines_test.go) decodes each one and checks what it must
hold.
"""

import os
import sys
import types
import zipfile

import msgspec

HERE = os.path.dirname(os.path.abspath(__file__))


def stub(name, **attrs):
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    sys.modules[name] = mod
    return mod


class _Any:
    def __init__(self, *a, **k):
        pass


def load(wheel, member, modname):
    with zipfile.ZipFile(wheel) as z:
        src = z.read(member).decode()
    mod = types.ModuleType(modname)
    exec(compile(src, f"{wheel}:{member}", "exec"), mod.__dict__)
    return mod


def load_vllm(wheel):
    stub("vllm.config.kv_events", KVEventsConfig=_Any)
    stub("vllm.logger", init_logger=lambda name: None)
    stub("vllm.utils.network_utils", get_ip=None, get_tcp_uri=None,
         is_valid_ipv6_address=None, split_zmq_path=None)
    stub("vllm.v1.core.kv_cache_utils", ExternalBlockHash=bytes | int)
    return load(wheel, "vllm/distributed/kv_events.py", "vllm_kv_events")


def load_sglang(wheel):
    stub("pydantic", BaseModel=object)
    stub("sglang.srt.runtime_context", get_parallel=None)
    stub("sglang.srt.utils.network", NetworkAddress=_Any)
    return load(wheel, "sglang/srt/disaggregation/kv_events.py", "sglang_kv_events")


def vllm_payloads(v):
    toks = list(range(100, 132))  # 4 blocks of 8
    yield "vllm_salted", v.KVEventBatch(ts=1.5, events=[
        v.BlockStored(block_hashes=[11, 12], parent_block_hash=None, token_ids=toks[:16],
                      block_size=8, lora_id=None, medium="GPU", lora_name=None,
                      extra_keys=[("tenant-a",), None], group_idx=0,
                      kv_cache_spec_kind="full_attention")], data_parallel_rank=0)
    yield "vllm_lora_salted", v.KVEventBatch(ts=1.5, events=[
        v.BlockStored(block_hashes=[21], parent_block_hash=None, token_ids=toks[:8],
                      block_size=8, lora_id=3, medium="GPU", lora_name="ad1",
                      extra_keys=[("ad1", "tenant-b")])], data_parallel_rank=0)
    # An image occupying tokens 8..23: blocks 1 and 2 carry (mm_hash, offset).
    yield "vllm_multimodal", v.KVEventBatch(ts=1.5, events=[
        v.BlockStored(block_hashes=[31, 32, 33, 34], parent_block_hash=None, token_ids=toks,
                      block_size=8, lora_id=None, medium="GPU", lora_name=None,
                      extra_keys=[None, (("img-hash-1", 8),), (("img-hash-1", 8),), None])],
        data_parallel_rank=0)
    # A hybrid model: the full-attention group holds all 4 blocks, the
    # sliding-window group only the last 2 (null blocks are skipped in
    # block_hashes, not in token_ids).
    yield "vllm_hybrid", v.KVEventBatch(ts=1.5, events=[
        v.BlockStored(block_hashes=[41, 42, 43, 44], parent_block_hash=None, token_ids=toks,
                      block_size=8, lora_id=None, medium="GPU", lora_name=None,
                      group_idx=0, kv_cache_spec_kind="full_attention"),
        v.BlockStored(block_hashes=[43, 44], parent_block_hash=None, token_ids=toks,
                      block_size=8, lora_id=None, medium="GPU", lora_name=None,
                      group_idx=1, kv_cache_spec_kind="sliding_window",
                      kv_cache_spec_sliding_window=16),
        v.BlockRemoved(block_hashes=[43], medium="GPU", group_idx=1)], data_parallel_rank=0)
    yield "vllm_lookahead", v.KVEventBatch(ts=1.5, events=[
        v.BlockStored(block_hashes=[51, 52], parent_block_hash=None, token_ids=toks[:16],
                      block_size=8, lora_id=None, medium="GPU", lora_name=None,
                      lookahead_token_ids=[toks[8:9], toks[16:17]])], data_parallel_rank=0)


def sglang_payloads(s):
    toks = list(range(200, 216))
    yield "sglang_salted", s.KVEventBatch(ts=2.5, events=[
        s.BlockStored(block_hashes=[-5, 6], parent_block_hash=None, token_ids=toks,
                      block_size=8, lora_id=None, medium=s.StorageMedium.GPU.value,
                      cache_salt="tenant-c")], attn_dp_rank=0)
    # EAGLE: each position is a bigram (t_j, t_j+1), as SGLang's radix cache emits them.
    bigrams = [(toks[j], toks[j + 1] if j + 1 < len(toks) else 999) for j in range(8)]
    yield "sglang_eagle_bigram", s.KVEventBatch(ts=2.5, events=[
        s.BlockStored(block_hashes=[7], parent_block_hash=None, token_ids=bigrams,
                      block_size=8, lora_id=None, medium=s.StorageMedium.GPU.value)],
        attn_dp_rank=0)
    yield "sglang_media", s.KVEventBatch(ts=2.5, events=[
        s.BlockStored(block_hashes=[8], parent_block_hash=None, token_ids=toks[:8],
                      block_size=8, lora_id=None, medium=m.value)
        for m in s.StorageMedium] + [
        s.BlockRemoved(block_hashes=[8], medium=s.StorageMedium.CPU.value)], attn_dp_rank=0)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    enc = msgspec.msgpack.Encoder()
    out = list(vllm_payloads(load_vllm(sys.argv[1]))) + list(sglang_payloads(load_sglang(sys.argv[2])))
    for name, batch in out:
        with open(os.path.join(HERE, name + ".msgpack"), "wb") as f:
            f.write(enc.encode(batch))
        print(name)


if __name__ == "__main__":
    main()
