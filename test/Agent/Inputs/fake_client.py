#!/usr/bin/python3
"""Drives fake_openai.py for the lit test: starts it, sends N POSTs, prints what came back."""
import json
import subprocess
import sys
import urllib.error
import urllib.request

script, record, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
server = subprocess.Popen([sys.executable, sys.argv[0].replace("fake_client.py", "fake_openai.py"),
                           "--script", script, "--record", record, "--max-seconds", "10"],
                          stdout=subprocess.PIPE, text=True)
port = int(server.stdout.readline().split()[1])
for i in range(n):
    req = urllib.request.Request("http://127.0.0.1:%d/v1/chat/completions" % port,
                                 data=json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi %d" % i}]}).encode(),
                                 headers={"Content-Type": "application/json", "Authorization": "Bearer test"})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            body = json.load(r)
            print("status", r.status, "content", body["choices"][0]["message"]["content"],
                  "usage", body["usage"]["total_tokens"])
    except urllib.error.HTTPError as e:
        print("status", e.code, "retry-after", e.headers.get("Retry-After"), "body", e.read().decode())
print("exit", server.wait(timeout=10))
