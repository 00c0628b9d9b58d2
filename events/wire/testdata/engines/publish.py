"""Publishes the engines' wire shapes over ZMQ with the engines' own
publishers: vLLM's or SGLang's ZmqEventPublisher (PUB socket, replay ROUTER
socket, publisher thread, replay buffer), loaded from the wheel by
engines.py, fed the engines' own event classes. For the e2e test
TestEnginePublishersThroughRelay.

    python publish.py vllm|sglang WHEEL PUB_PORT REPLAY_PORT HTTP_PORT

It serves /health and /metrics (the engine's load gauges under its own
names: vllm:num_requests_running, sglang:num_running_reqs, ...) on
127.0.0.1:HTTP_PORT, prints "ready", then reads commands, one a line, each
answered "ok" once the publisher's thread has sent what it queued:

  publish NAME BASE   the shape NAME of engines.py, tokens from BASE
  tiers BASE          SGLang only: one block on each non-GPU tier
  quit
"""

import http.server
import os
import sys
import threading
import time

sys.dont_write_bytecode = True  # nothing written next to the script
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import engines  # noqa: E402

# The load each engine reports, as its own /metrics names and labels it
# (vLLM: vllm/v1/metrics/loggers.py; SGLang:
# sglang/srt/observability/metrics_collector.py).
METRICS = {
    "vllm": 'vllm:num_requests_running{engine="0",model_name="m"} 3.0\n'
            'vllm:num_requests_waiting{engine="0",model_name="m"} 2.0\n'
            'vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.25\n',
    "sglang": 'sglang:num_running_reqs{engine_type="unified",model_name="m",pp_rank="0",tp_rank="0"} 5.0\n'
              'sglang:num_queue_reqs{engine_type="unified",model_name="m",pp_rank="0",tp_rank="0"} 4.0\n'
              'sglang:token_usage{engine_type="unified",model_name="m",pp_rank="0",tp_rank="0"} 0.5\n',
}


def serve_http(port, engine):
    body = METRICS[engine].encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path not in ("/health", "/metrics"):
                self.send_error(404)
                return
            data = body if self.path == "/metrics" else b""
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()


def main():
    if len(sys.argv) != 6 or sys.argv[1] not in METRICS:
        sys.exit(__doc__)
    engine, wheel = sys.argv[1], sys.argv[2]
    pub_port, replay_port, http_port = (int(a) for a in sys.argv[3:])
    if engine == "vllm":
        mod = engines.load_vllm(wheel)
        # vLLM binds its PUB socket only for a wildcard address.
        pub = mod.ZmqEventPublisher(data_parallel_rank=0, endpoint=f"tcp://*:{pub_port}",
                                    replay_endpoint=f"tcp://127.0.0.1:{replay_port}")
        shapes = engines.vllm_shapes
    else:
        mod = engines.load_sglang(wheel)
        pub = mod.ZmqEventPublisher(attn_dp_rank=0, endpoint=f"tcp://127.0.0.1:{pub_port}", bind=True,
                                    replay_endpoint=f"tcp://127.0.0.1:{replay_port}")
        shapes = engines.sglang_shapes
    serve_http(http_port, engine)
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            break
        try:
            if words[0] == "publish":
                batch = dict(shapes(mod, int(words[2]), time.time()))[words[1]]
            elif words[0] == "tiers" and engine == "sglang":
                batch = engines.sglang_tiers(mod, int(words[1]), time.time())
            else:
                raise ValueError(f"unknown command {words[0]!r}")
            pub.publish(batch)
            pub._event_queue.join()  # sent by the publisher thread
        except Exception as e:  # noqa: BLE001 - reported to the test
            print(f"error {e!r}", flush=True)
            continue
        print("ok", flush=True)
    pub.shutdown()


if __name__ == "__main__":
    main()
