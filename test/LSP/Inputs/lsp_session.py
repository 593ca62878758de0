#!/usr/bin/python3
"""Drives a language server over stdio from a script, for lit tests.

usage: lsp_session.py [--timeout S] [--var NAME=VALUE ...] SCRIPT -- SERVER [ARGS...]

Every message the server sends is printed on stdout as one JSON object per
line (keys sorted), in the order received. Script lines (blank lines and lines
starting with '#' are skipped; ${NAME} is replaced by --var values and
${FILE:NAME} by the text of the file NAME names, JSON-escaped without quotes):

  send {JSON}               frame and send a message ("jsonrpc": "2.0" is added)
  send-raw TEXT             send TEXT as a message body as is (malformed input tests)
  open URI PATH [VERSION]   didOpen URI with the text of PATH (languageId python)
  wait-response ID          wait for the response to request ID
  wait-notification METHOD [KEY=VALUE ...]
                            wait for a notification whose params have KEY == VALUE
                            (VALUE parsed as JSON if it can be, else a string)
  sleep MS                  pause
  expect-exit [CODE]        wait for the server to exit; prints "exit code N"

A wait that times out prints "TIMEOUT: <line>" and exits with status 1.
"""
import json
import os
import queue
import subprocess
import sys
import threading
import time


def fail(message):
    print(message, flush=True)
    sys.exit(1)


def read_messages(stream, out):
    """Reads Content-Length framed messages into the queue `out`; None at EOF."""
    while True:
        length = None
        while True:
            line = stream.readline()
            if not line:
                out.put(None)
                return
            line = line.rstrip(b"\r\n")
            if not line:
                if length is not None:
                    break
                continue
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        body = stream.read(length)
        if len(body) < length:
            out.put(None)
            return
        out.put(json.loads(body.decode("utf-8")))


def main():
    args = sys.argv[1:]
    timeout = 10.0
    variables = {}
    while args and args[0].startswith("--") and args[0] != "--":
        if args[0] == "--timeout":
            timeout = float(args[1])
            args = args[2:]
        elif args[0] == "--var":
            name, _, value = args[1].partition("=")
            variables[name] = value
            args = args[2:]
        else:
            fail("unknown option " + args[0])
    if len(args) < 3 or args[1] != "--":
        fail(__doc__)
    script_path, command = args[0], args[2:]

    def substitute(text):
        for name, value in variables.items():
            if "${FILE:" + name + "}" in text:
                with open(value, encoding="utf-8") as f:
                    text = text.replace("${FILE:" + name + "}", json.dumps(f.read())[1:-1])
            text = text.replace("${" + name + "}", value)
        return text

    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    messages = queue.Queue()
    threading.Thread(target=read_messages, args=(server.stdout, messages), daemon=True).start()
    eof = [False]

    def send_body(body):
        data = body.encode("utf-8")
        try:
            server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
            server.stdin.flush()
        except BrokenPipeError:
            pass

    def send(message):
        message.setdefault("jsonrpc", "2.0")
        send_body(json.dumps(message))

    def wait_for(predicate, what):
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or eof[0]:
                fail("TIMEOUT: " + what)
            try:
                message = messages.get(timeout=remaining)
            except queue.Empty:
                fail("TIMEOUT: " + what)
            if message is None:
                eof[0] = True
                fail("EOF: server closed its output while waiting for: " + what)
            print(json.dumps(message, sort_keys=True), flush=True)
            if predicate(message):
                return

    with open(script_path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        line = substitute(line)
        verb, _, rest = line.partition(" ")
        rest = rest.strip()
        if verb == "send":
            send(json.loads(rest))
        elif verb == "send-raw":
            send_body(rest)
        elif verb == "open":
            parts = rest.split()
            with open(parts[1], encoding="utf-8") as f:
                text = f.read()
            version = int(parts[2]) if len(parts) > 2 else 1
            send({"method": "textDocument/didOpen",
                  "params": {"textDocument": {"uri": parts[0], "languageId": "python",
                                              "version": version, "text": text}}})
        elif verb == "wait-response":
            wanted = json.loads(rest)
            wait_for(lambda m: "method" not in m and m.get("id") == wanted, line)
        elif verb == "wait-notification":
            parts = rest.split()
            method, conditions = parts[0], []
            for cond in parts[1:]:
                key, _, value = cond.partition("=")
                try:
                    value = json.loads(value)
                except ValueError:
                    pass
                conditions.append((key, value))

            def matches(m, method=method, conditions=conditions):
                if m.get("method") != method or "id" in m:
                    return False
                params = m.get("params", {})
                return all(params.get(k) == v for k, v in conditions)
            wait_for(matches, line)
        elif verb == "sleep":
            time.sleep(float(rest) / 1000.0)
        elif verb == "expect-exit":
            try:
                server.stdin.close()
            except BrokenPipeError:
                pass
            # Print what is left, then the exit status.
            while True:
                try:
                    message = messages.get(timeout=timeout)
                except queue.Empty:
                    fail("TIMEOUT: " + line)
                if message is None:
                    break
                print(json.dumps(message, sort_keys=True), flush=True)
            try:
                code = server.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                server.kill()
                fail("TIMEOUT: the server did not exit")
            print("exit code %d" % code, flush=True)
            if rest and int(rest) != code:
                sys.exit(1)
            return
        else:
            fail("unknown script command: " + raw)
    server.stdin.close()
    server.kill()
    server.wait()


if __name__ == "__main__":
    main()
