"""The engines' own KV event code, loaded from their wheels, and the wire
shapes the tests publish with it.

vllm/distributed/kv_events.py and sglang/srt/disaggregation/kv_events.py are
read straight out of the wheel files and executed with their
package-internal imports stubbed: the stubs stand in for a logger, a config
model and network helpers that only the publishers' wildcard-port binding
(tcp://*:0) and discovery use. Everything else (the msgspec Structs, the
ZmqEventPublisher classes with their replay buffers and threads) is the
engines' code. Needs msgspec and pyzmq.

gen.py writes the shapes as checked-in payloads; publish.py publishes them
over ZMQ with the engines' own publishers (the e2e test
TestEnginePublishersThroughRelay).
"""

import logging
import sys
import types
import zipfile

VLLM_VERSION = "0.33.0"
SGLANG_VERSION = "0.5.23"


def _stub(name, **attrs):
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    sys.modules[name] = mod
    return mod


class _Any:
    def __init__(self, *a, **k):
        pass


def _load(wheel, member, modname):
    with zipfile.ZipFile(wheel) as z:
        src = z.read(member).decode()
    mod = types.ModuleType(modname)
    exec(compile(src, f"{wheel}:{member}", "exec"), mod.__dict__)
    return mod


def load_vllm(wheel):
    _stub("vllm.config.kv_events", KVEventsConfig=_Any)
    _stub("vllm.logger", init_logger=logging.getLogger)
    _stub("vllm.utils.network_utils", get_ip=None, get_tcp_uri=None,
          is_valid_ipv6_address=None, split_zmq_path=None)
    _stub("vllm.v1.core.kv_cache_utils", ExternalBlockHash=bytes | int)
    return _load(wheel, "vllm/distributed/kv_events.py", "vllm_kv_events")


def load_sglang(wheel):
    _stub("pydantic", BaseModel=object)
    _stub("sglang.srt.runtime_context", get_parallel=None)
    _stub("sglang.srt.utils.network", NetworkAddress=_Any)
    return _load(wheel, "sglang/srt/disaggregation/kv_events.py", "sglang_kv_events")


def vllm_shapes(v, base=100, ts=1.5):
    """vLLM's wire shapes as (name, KVEventBatch); tokens start at base
    (each shape's blocks are base, base+1, ... in blocks of 8)."""
    toks = list(range(base, base + 32))  # 4 blocks of 8
    yield "vllm_salted", v.KVEventBatch(ts=ts, events=[
        v.BlockStored(block_hashes=[11, 12], parent_block_hash=None, token_ids=toks[:16],
                      block_size=8, lora_id=None, medium="GPU", lora_name=None,
                      extra_keys=[("tenant-a",), None], group_idx=0,
                      kv_cache_spec_kind="full_attention")], data_parallel_rank=0)
    yield "vllm_lora_salted", v.KVEventBatch(ts=ts, events=[
        v.BlockStored(block_hashes=[21], parent_block_hash=None, token_ids=toks[:8],
                      block_size=8, lora_id=3, medium="GPU", lora_name="ad1",
                      extra_keys=[("ad1", "tenant-b")])], data_parallel_rank=0)
    # An image occupying tokens 8..23: blocks 1 and 2 carry (mm_hash, offset).
    yield "vllm_multimodal", v.KVEventBatch(ts=ts, events=[
        v.BlockStored(block_hashes=[31, 32, 33, 34], parent_block_hash=None, token_ids=toks,
                      block_size=8, lora_id=None, medium="GPU", lora_name=None,
                      extra_keys=[None, (("img-hash-1", 8),), (("img-hash-1", 8),), None])],
        data_parallel_rank=0)
    # A hybrid model: the full-attention group holds all 4 blocks, the
    # sliding-window group only the last 2 (null blocks are skipped in
    # block_hashes, not in token_ids).
    yield "vllm_hybrid", v.KVEventBatch(ts=ts, events=[
        v.BlockStored(block_hashes=[41, 42, 43, 44], parent_block_hash=None, token_ids=toks,
                      block_size=8, lora_id=None, medium="GPU", lora_name=None,
                      group_idx=0, kv_cache_spec_kind="full_attention"),
        v.BlockStored(block_hashes=[43, 44], parent_block_hash=None, token_ids=toks,
                      block_size=8, lora_id=None, medium="GPU", lora_name=None,
                      group_idx=1, kv_cache_spec_kind="sliding_window",
                      kv_cache_spec_sliding_window=16),
        v.BlockRemoved(block_hashes=[43], medium="GPU", group_idx=1)], data_parallel_rank=0)
    yield "vllm_lookahead", v.KVEventBatch(ts=ts, events=[
        v.BlockStored(block_hashes=[51, 52], parent_block_hash=None, token_ids=toks[:16],
                      block_size=8, lora_id=None, medium="GPU", lora_name=None,
                      lookahead_token_ids=[toks[8:9], toks[16:17]])], data_parallel_rank=0)


def sglang_shapes(s, base=200, ts=2.5):
    """SGLang's wire shapes as (name, KVEventBatch); tokens start at base."""
    toks = list(range(base, base + 16))
    yield "sglang_salted", s.KVEventBatch(ts=ts, events=[
        s.BlockStored(block_hashes=[-5, 6], parent_block_hash=None, token_ids=toks,
                      block_size=8, lora_id=None, medium=s.StorageMedium.GPU.value,
                      cache_salt="tenant-c")], attn_dp_rank=0)
    # EAGLE: each position is a bigram (t_j, t_j+1), as SGLang's radix cache emits them.
    bigrams = [(toks[j], toks[j + 1] if j + 1 < len(toks) else 999) for j in range(8)]
    yield "sglang_eagle_bigram", s.KVEventBatch(ts=ts, events=[
        s.BlockStored(block_hashes=[7], parent_block_hash=None, token_ids=bigrams,
                      block_size=8, lora_id=None, medium=s.StorageMedium.GPU.value)],
        attn_dp_rank=0)
    yield "sglang_media", s.KVEventBatch(ts=ts, events=[
        s.BlockStored(block_hashes=[8], parent_block_hash=None, token_ids=toks[:8],
                      block_size=8, lora_id=None, medium=m.value)
        for m in s.StorageMedium] + [
        s.BlockRemoved(block_hashes=[8], medium=s.StorageMedium.CPU.value)], attn_dp_rank=0)


def sglang_tiers(s, base, ts):
    """One root block per SGLang storage tier other than GPU, each held on
    that tier alone (hashes 9, 10, 11): how the router values it shows how
    it read the medium's name."""
    tiers = [m for m in s.StorageMedium if m is not s.StorageMedium.GPU]
    return s.KVEventBatch(ts=ts, events=[
        s.BlockStored(block_hashes=[9 + i], parent_block_hash=None,
                      token_ids=list(range(base + 8 * i, base + 8 * i + 8)),
                      block_size=8, lora_id=None, medium=m.value)
        for i, m in enumerate(tiers)], attn_dp_rank=0)
