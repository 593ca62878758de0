"""Sends raw, partly malformed LSP frames to a server and prints the ids of the responses it gets back
(reliability report D16). usage: raw_frames.py SERVER [ARGS...]"""
import json
import subprocess
import sys


def frame(obj, length=None):
    body = json.dumps(obj).encode()
    return b"Content-Length: " + (str(len(body)) if length is None else length).encode() + b"\r\n\r\n" + body


def request(i, method="shutdown" if False else "textDocument/hover"):
    return {"jsonrpc": "2.0", "id": i, "method": method,
            "params": {"textDocument": {"uri": "file:///none.py"}, "position": {"line": 0, "character": 0}}}


stream = b"".join([
    frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}),
    frame(request(2), length="-5"),                        # negative
    frame(request(3)),
    frame(request(4), length="100000000000000000000"),     # past 64 bits
    frame(request(5)),
    b"Content-Length: 100000000\r\n\r\n",                  # over the cap, no body
    frame(request(6)),
    b"X-Foo: bar\r\n\r\n" + json.dumps(request(7)).encode(),  # no Content-Length
    frame(request(8)),
    frame({"jsonrpc": "2.0", "id": 9, "method": "shutdown"}),
    frame({"jsonrpc": "2.0", "method": "exit"}),
])
proc = subprocess.run(sys.argv[1:], input=stream, capture_output=True, timeout=30)
out = proc.stdout
ids = []
while out:
    head, _, rest = out.partition(b"\r\n\r\n")
    n = int(head.split(b":")[1])
    ids.append(json.loads(rest[:n]).get("id"))
    out = rest[n:]
print("responses", " ".join(str(i) for i in ids))
print("exit", proc.returncode)
sys.stdout.write(proc.stderr.decode())
