#!/usr/bin/python3
"""A scripted stand-in for an OpenAI-compatible chat endpoint, for tests.

Binds 127.0.0.1 on an ephemeral port and prints "PORT <n>" (flushed) on stdout.
Every POST is answered with the next entry of the script, a JSON list of:

  {"status": 200,                # HTTP status (default 200)
   "content": "text",            # shorthand: an OpenAI chat.completion carrying this text
   "usage": [12, 5],             # prompt / completion tokens for the shorthand (default [10, 5])
   "body": {...} or "text",      # the exact body instead of the shorthand
   "delay": 1.5,                 # seconds to wait before answering
   "retry_after": "1"}           # a Retry-After header

Each request is appended to the record file as one JSON line:
  {"path": ..., "headers": {lower-case name: value}, "body": <parsed JSON or text>, "time": <epoch s>}
The record is written before any delay, so a client that times out still leaves a trace.

Bounded: exits after answering --max-requests requests (default: the script length)
or after --max-seconds (default 20) seconds, whichever comes first. Requests past the
end of the script get a 500 "script exhausted".
"""
import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    ap.add_argument("--record", required=True)
    ap.add_argument("--max-requests", type=int, default=0)
    ap.add_argument("--max-seconds", type=float, default=20.0)
    args = ap.parse_args()

    with open(args.script) as f:
        script = json.load(f)
    max_requests = args.max_requests or len(script)
    lock = threading.Lock()
    state = {"next": 0, "answered": 0}
    record = open(args.record, "a")

    def hard_exit():
        record.flush()
        os._exit(0)

    # The wall-clock bound: a timer that ends the process whatever it is doing.
    timer = threading.Timer(args.max_seconds, hard_exit)
    timer.daemon = True
    timer.start()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *a):  # keep stderr quiet
            pass

        def do_GET(self):
            self.reply(404, {"error": {"message": "only POST is served"}}, {})

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode("utf-8", "replace")
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw
            with lock:
                index = state["next"]
                state["next"] += 1
                record.write(json.dumps({"path": self.path,
                                         "headers": {k.lower(): v for k, v in self.headers.items()},
                                         "body": body, "time": time.time()}) + "\n")
                record.flush()
            entry = script[index] if index < len(script) else {
                "status": 500, "body": {"error": {"message": "script exhausted"}}}
            if entry.get("delay"):
                time.sleep(float(entry["delay"]))
            headers = {}
            if "retry_after" in entry:
                headers["Retry-After"] = str(entry["retry_after"])
            if "body" in entry:
                payload = entry["body"]
            else:
                usage = entry.get("usage", [10, 5])
                payload = {
                    "id": "chatcmpl-%d" % index, "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", "fake") if isinstance(body, dict) else "fake",
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": entry.get("content", "")}}],
                    "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                              "total_tokens": usage[0] + usage[1]}}
            try:
                self.reply(int(entry.get("status", 200)), payload, headers)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)
            with lock:
                state["answered"] += 1
                done = state["answered"] >= max_requests
            if done:
                threading.Thread(target=self.server.shutdown, daemon=True).start()

        def reply(self, status, payload, headers):
            data = payload if isinstance(payload, str) else json.dumps(payload)
            data = data.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print("PORT %d" % server.server_address[1], flush=True)
    server.serve_forever(poll_interval=0.05)
    record.flush()
    # Let a handler that is still writing (a delayed answer) finish briefly.
    time.sleep(0.05)
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
