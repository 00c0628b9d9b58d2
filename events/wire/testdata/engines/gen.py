"""Writes KV event payloads encoded by the engines' own event classes.

The classes come from the engines' wheels, not from a re-implementation
(engines.py loads vllm/distributed/kv_events.py and
sglang/srt/disaggregation/kv_events.py out of the wheel files). Needs
msgspec and pyzmq (the relay's interop venv has both).

    pip download vllm==0.33.0 sglang==0.5.23 --no-deps -d DIR
    python gen.py DIR/vllm-0.33.0-*.whl DIR/sglang-0.5.23-*.whl

Each payload is written as NAME.msgpack next to this script; the Go test
TestEnginePayloads (engines_test.go) decodes each one and checks what it must
hold. The same shapes go live, through the engines' own ZMQ publishers, in
publish.py.
"""

import os
import sys

import msgspec

import engines

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    enc = msgspec.msgpack.Encoder()
    out = list(engines.vllm_shapes(engines.load_vllm(sys.argv[1]))) + \
        list(engines.sglang_shapes(engines.load_sglang(sys.argv[2])))
    for name, batch in out:
        with open(os.path.join(HERE, name + ".msgpack"), "wb") as f:
            f.write(enc.encode(batch))
        print(name)


if __name__ == "__main__":
    main()
