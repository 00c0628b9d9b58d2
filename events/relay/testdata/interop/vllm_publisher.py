"""A KV-event publisher built the way vLLM's ZmqEventPublisher is, for the
relay's interop test: a PUB socket sending [topic, 8-byte big-endian seq,
msgpack payload] with msgspec array-like batches and tagged events, and a
ROUTER replay socket answering [empty, start_seq] with every buffered batch
from start_seq on, then an end marker.

Commands on stdin, one per line, each answered with "ok" on stdout:
  send N        publish N batches (one BlockStored each)
  skip N        make N batches that go to the replay buffer but not to PUB
                (what the PUB's high-water mark does to a slow subscriber)
  drop N        make N batches that are neither sent nor buffered
  restart       start the sequence over at 0 with an empty buffer
  layout old|new  replay replies without / with the topic frame
  legacy on|off   events as tagged arrays instead of tagged maps
  quit
"""

import sys
import time

import msgspec
import zmq


class EventBatch(msgspec.Struct, array_like=True, omit_defaults=True, gc=False):
    ts: float
    events: list
    data_parallel_rank: int | None = None


class BlockStored(msgspec.Struct, omit_defaults=True, gc=False, tag=True):
    block_hashes: list[int]
    parent_block_hash: int | None
    token_ids: list[int]
    block_size: int
    lora_id: int | None
    medium: str | None
    lora_name: str | None


class LegacyBlockStored(msgspec.Struct, array_like=True, gc=False, tag="BlockStored"):
    block_hashes: list[int]
    parent_block_hash: int | None
    token_ids: list[int]
    block_size: int
    lora_id: int | None


END_SEQ = (2**64 - 1).to_bytes(8, "big")
BLOCK = 4


class Publisher:
    def __init__(self, topic: bytes):
        ctx = zmq.Context.instance()
        self.pub = ctx.socket(zmq.PUB)
        self.pub_port = self.pub.bind_to_random_port("tcp://127.0.0.1")
        self.router = ctx.socket(zmq.ROUTER)
        self.replay_port = self.router.bind_to_random_port("tcp://127.0.0.1")
        self.topic = topic
        self.enc = msgspec.msgpack.Encoder()
        self.seq = 0
        self.buffer = []
        self.new_layout = True
        self.legacy = False

    def make(self):
        seq = self.seq
        self.seq += 1
        toks = [seq * BLOCK + i for i in range(BLOCK)]
        cls = LegacyBlockStored if self.legacy else BlockStored
        args = dict(block_hashes=[1000 + seq], parent_block_hash=None, token_ids=toks,
                    block_size=BLOCK, lora_id=None)
        if not self.legacy:
            args.update(medium="GPU", lora_name=None)
        batch = EventBatch(ts=time.time(), events=[cls(**args)], data_parallel_rank=0)
        return seq, self.enc.encode(batch)

    def command(self, words):
        op = words[0]
        n = int(words[1]) if len(words) > 1 and words[1].isdigit() else 0
        if op in ("send", "skip"):
            for _ in range(n):
                seq, payload = self.make()
                self.buffer.append((seq, payload))
                if op == "send":
                    self.pub.send_multipart((self.topic, seq.to_bytes(8, "big"), payload))
        elif op == "drop":
            for _ in range(n):
                self.make()
        elif op == "restart":
            self.seq, self.buffer = 0, []
        elif op == "layout":
            self.new_layout = words[1] == "new"
        elif op == "legacy":
            self.legacy = words[1] == "on"

    def serve_replay(self):
        frames = self.router.recv_multipart()
        if len(frames) != 3:
            return
        client, _, start = frames
        start = int.from_bytes(start, "big")
        for seq, payload in self.buffer:
            if seq >= start:
                self.reply(client, seq.to_bytes(8, "big"), payload)
        self.reply(client, END_SEQ, b"")

    def reply(self, client, seq_bytes, payload):
        if self.new_layout:
            self.router.send_multipart((client, b"", self.topic, seq_bytes, payload))
        else:
            self.router.send_multipart((client, b"", seq_bytes, payload))


def main():
    p = Publisher(sys.argv[1].encode() if len(sys.argv) > 1 else b"")
    print(f"ready {p.pub_port} {p.replay_port}", flush=True)
    poller = zmq.Poller()
    poller.register(p.router, zmq.POLLIN)
    poller.register(sys.stdin, zmq.POLLIN)
    while True:
        for sock, _ in poller.poll():
            if sock is p.router:
                p.serve_replay()
                continue
            line = sys.stdin.readline()
            words = line.split()
            if not words or words[0] == "quit":
                return
            p.command(words)
            print("ok", flush=True)


if __name__ == "__main__":
    main()
