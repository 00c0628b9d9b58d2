"""A KV-event engine stand-in built the way vLLM's ZmqEventPublisher is, for
the fault tests: a PUB socket sending [topic, 8-byte big-endian seq, msgpack
payload] with msgspec array-like batches and tagged events, a ROUTER replay
socket answering [empty, start_seq] with every buffered batch from start_seq
on and then an end marker, and an HTTP /health that answers 200.

It keeps the engine's true block set, as named chains of blocks, and prints it
on request, so a test can compare the router's index with the truth.

Usage: kv_engine.py --replay-port P --health-port P (--pub-bind P | --pub-connect URL)
                    [--topic T] [--block-size N] [--dp-rank N] [--seed N]

Commands on stdin, one per line, each answered with one line on stdout:
  store NAME N      one batch storing N more blocks of chain NAME  -> ok SEQ
  remove NAME K     one batch removing the last K blocks of NAME    -> ok SEQ
  reannounce NAME   kv_cache_report_mode=full: one batch storing NAME's
                    blocks again, which the engine already holds     -> ok SEQ
  mode send|skip    skip: batches go to the replay buffer but not to PUB
                    (what the PUB's high-water mark does)            -> ok
  restart           start over: seq 0, empty buffer and cache, new hash seed -> ok
  truth             -> JSON {"chains": {NAME: [token ids]}, "blocks": N, "seq": LAST}
  quit
"""

import argparse
import json
import os
import random
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import msgspec
import zmq

# vLLM's wire structs, as the relay's interop test defines them.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "events", "relay", "testdata", "interop"))
from vllm_publisher import BlockStored, EventBatch, Publisher  # noqa: E402


class BlockRemoved(msgspec.Struct, omit_defaults=True, gc=False, tag=True):
    block_hashes: list[int]
    medium: str | None


class Engine:
    def __init__(self, a):
        ctx = zmq.Context.instance()
        self.pub = ctx.socket(zmq.PUB)
        if a.pub_connect:
            self.pub.connect(a.pub_connect)
        else:
            self.pub.bind(f"tcp://127.0.0.1:{a.pub_bind}")
        self.router = ctx.socket(zmq.ROUTER)
        self.router.bind(f"tcp://127.0.0.1:{a.replay_port}")
        self.topic = a.topic.encode()
        self.block = a.block_size
        self.rank = a.dp_rank
        self.rng = random.Random(a.seed)
        self.enc = msgspec.msgpack.Encoder()
        self.seq = -1
        self.buffer = []
        self.chains = {}  # name -> [(hash, tokens)]
        self.names = {}  # name -> index, for distinct token ids per chain
        self.skip = False

    def emit(self, events):
        self.seq += 1
        payload = self.enc.encode(EventBatch(ts=time.time(), events=events, data_parallel_rank=self.rank))
        self.buffer.append((self.seq, payload))
        if not self.skip:
            self.pub.send_multipart((self.topic, self.seq.to_bytes(8, "big"), payload))
        return self.seq

    def tokens(self, name, i):
        # Distinct per rank, so two ranks of one endpoint never hold the
        # same content by accident.
        base = (self.rank * 1000 + self.names.setdefault(name, len(self.names) + 1)) * 100000
        return [base + i * self.block + j for j in range(self.block)]

    def store(self, name, n):
        chain = self.chains.setdefault(name, [])
        parent = chain[-1][0] if chain else None
        new = [(self.rng.getrandbits(63), self.tokens(name, len(chain) + i)) for i in range(n)]
        chain.extend(new)
        return self.emit([BlockStored(block_hashes=[h for h, _ in new], parent_block_hash=parent,
                                      token_ids=[t for _, ts in new for t in ts], block_size=self.block,
                                      lora_id=None, medium="GPU", lora_name=None)])

    def remove(self, name, k):
        chain = self.chains.get(name, [])
        gone, self.chains[name] = chain[len(chain) - k:], chain[:len(chain) - k]
        return self.emit([BlockRemoved(block_hashes=[h for h, _ in gone], medium="GPU")])

    def reannounce(self, name):
        chain = self.chains[name]
        return self.emit([BlockStored(block_hashes=[h for h, _ in chain], parent_block_hash=None,
                                      token_ids=[t for _, ts in chain for t in ts], block_size=self.block,
                                      lora_id=None, medium="GPU", lora_name=None)])

    def truth(self):
        chains = {n: [t for _, ts in c for t in ts] for n, c in self.chains.items() if c}
        return json.dumps({"chains": chains, "blocks": sum(len(c) for c in self.chains.values()),
                           "seq": self.seq})

    def command(self, w):
        op = w[0]
        if op == "store":
            return f"ok {self.store(w[1], int(w[2]))}"
        if op == "remove":
            return f"ok {self.remove(w[1], int(w[2]))}"
        if op == "reannounce":
            return f"ok {self.reannounce(w[1])}"
        if op == "mode":
            self.skip = w[1] == "skip"
            return "ok"
        if op == "restart":
            self.seq, self.buffer, self.chains = -1, [], {}
            self.rng = random.Random(self.rng.getrandbits(63))
            return "ok"
        if op == "truth":
            return self.truth()
        return f"error unknown command {op!r}"

    # The replay socket answers as the interop publisher's does (the
    # topic-framed layout of current vLLM).
    new_layout = True
    serve_replay = Publisher.serve_replay
    reply = Publisher.reply


class Health(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pub-bind", type=int)
    p.add_argument("--pub-connect")
    p.add_argument("--replay-port", type=int, required=True)
    p.add_argument("--health-port", type=int, required=True)
    p.add_argument("--topic", default="kv")
    p.add_argument("--block-size", type=int, default=4)
    p.add_argument("--dp-rank", type=int, default=0)
    p.add_argument("--seed", type=int, default=None)
    a = p.parse_args()
    e = Engine(a)
    httpd = ThreadingHTTPServer(("127.0.0.1", a.health_port), Health)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    print("ready", flush=True)
    poller = zmq.Poller()
    poller.register(e.router, zmq.POLLIN)
    poller.register(sys.stdin, zmq.POLLIN)
    while True:
        for sock, _ in poller.poll():
            if sock is e.router:
                e.serve_replay()
                continue
            words = sys.stdin.readline().split()
            if not words or words[0] == "quit":
                return
            print(e.command(words), flush=True)


if __name__ == "__main__":
    main()
