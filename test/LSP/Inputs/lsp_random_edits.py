#!/usr/bin/python3
"""Random incremental edits against a language server (for lit tests).

usage: lsp_random_edits.py --seed N --edits N KERNEL -- SERVER [ARGS...]

Opens KERNEL, applies N random incremental edits (insertions of code
fragments, including non-ASCII text, and deletions; positions in UTF-16),
each followed by a random request (hover, inlay hints, code actions, code
lenses) that must be answered without an error. Finally replaces the whole
buffer, using the range of the text as this script tracked it, by the
original kernel: if the server's copy had diverged, the result would not be
the original. Prints that final diagnostics push, then "exit code N".
"""
import json
import queue
import random
import subprocess
import sys
import threading

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from lsp_session import read_messages  # noqa: E402

FRAGMENTS = ["(", ")", "[", "]", ":", "\n", "    ", "for i in nl.affine_range(", "nl.load(", "x", " = ",
             "\U0001F600", "\u00e9", "\u20ac", "#", '"', "'", "\\", "def ", "@nki.jit\n", "+= 1", "0",
             "128", ",", ".", "nl.", "return "]


def position(text, offset):
    before = text[:offset]
    line_start = before.rfind("\n") + 1
    return {"line": before.count("\n"), "character": len(before[line_start:].encode("utf-16-le")) // 2}


def main():
    args = sys.argv[1:]
    seed, edits = 0, 100
    while args and args[0] != "--" and args[0].startswith("--"):
        if args[0] == "--seed":
            seed = int(args[1])
        elif args[0] == "--edits":
            edits = int(args[1])
        args = args[2:]
    path, command = args[0], args[2:]
    rnd = random.Random(seed)
    with open(path, encoding="utf-8") as f:
        original = f.read()
    text = original
    uri = "file://" + path
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    messages = queue.Queue()
    threading.Thread(target=read_messages, args=(server.stdout, messages), daemon=True).start()

    def send(message):
        message["jsonrpc"] = "2.0"
        data = json.dumps(message).encode("utf-8")
        server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        server.stdin.flush()

    def wait(predicate):
        while True:
            message = messages.get(timeout=60)
            if message is None:
                print("server closed its output (exit code %s)" % server.wait())
                sys.exit(1)
            if predicate(message):
                return message

    def request(rid, method, params):
        send({"id": rid, "method": method, "params": params})
        response = wait(lambda m: m.get("id") == rid and "method" not in m)
        if "error" in response:
            print("ERROR for %s: %s" % (method, json.dumps(response)))
            sys.exit(1)

    request(0, "initialize", {"capabilities": {}})
    send({"method": "textDocument/didOpen",
          "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}})
    doc = {"uri": uri}
    for version in range(2, edits + 2):
        a = rnd.randrange(len(text) + 1)
        b = min(len(text), a + rnd.choice([0, 0, 1, 2, 5, 20]))
        insert = rnd.choice(FRAGMENTS) if rnd.random() < 0.7 else ""
        change = {"range": {"start": position(text, a), "end": position(text, b)}, "text": insert}
        text = text[:a] + insert + text[b:]
        send({"method": "textDocument/didChange",
              "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}})
        at = position(text, rnd.randrange(len(text) + 1))
        kind = rnd.randrange(4)
        if kind == 0:
            request(version, "textDocument/hover", {"textDocument": doc, "position": at})
        elif kind == 1:
            request(version, "textDocument/inlayHint",
                    {"textDocument": doc, "range": {"start": {"line": 0, "character": 0},
                                                    "end": {"line": 10000, "character": 0}}})
        elif kind == 2:
            request(version, "textDocument/codeAction",
                    {"textDocument": doc, "range": {"start": at, "end": at}, "context": {"diagnostics": []}})
        else:
            request(version, "textDocument/codeLens", {"textDocument": doc})
    final = edits + 2
    whole = {"start": {"line": 0, "character": 0}, "end": position(text, len(text))}
    send({"method": "textDocument/didChange",
          "params": {"textDocument": {"uri": uri, "version": final},
                     "contentChanges": [{"range": whole, "text": original}]}})
    push = wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                and m["params"].get("version") == final)
    print(json.dumps(push, sort_keys=True))
    request(final + 1, "shutdown", None)
    send({"method": "exit"})
    server.stdin.close()
    print("exit code %d" % server.wait(timeout=60))


if __name__ == "__main__":
    main()
