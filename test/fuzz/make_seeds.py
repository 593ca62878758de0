#!/usr/bin/python3
"""Writes the seed corpus of one fuzz target into DIR (scripts/fuzz.sh calls it).

usage: make_seeds.py TARGET DIR      TARGET: frontend | interp | lsp | ops | memory-import

frontend, interp: the suite's and the tests' kernels, plus (frontend) kernels with deep and long
  trace-time expressions: nested parentheses, brackets and calls, unary chains, long sums and
  products, power towers, big literals, nested comprehensions and f-strings.
lsp: framed LSP sessions (hover, code lenses, actions, edits, settings, cancellation, bad frames).
ops: the op JSON of the rewrite tests and the shipped patterns, and ops naming the fixture kernels.
memory-import: the memory exports of the tests.
"""
import glob
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADER = "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"


def kernel_with(body_lines):
    return HEADER + "".join("  " + line + "\n" for line in body_lines) + \
        "  out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)\n  return out\n"


def deep_expression_kernels():
    yield "parens", kernel_with(["n = " + "(" * 300 + "1" + ")" * 300])
    yield "parens-too-deep", kernel_with(["n = " + "(" * 2000 + "1" + ")" * 2000])
    yield "brackets", kernel_with(["n = " + "[" * 200 + "1" + "]" * 200])
    yield "calls", kernel_with(["n = " + "abs(" * 200 + "-1" + ")" * 200])
    yield "unary", kernel_with(["n = " + "-" * 3000 + "1"])
    yield "not-chain", kernel_with(["b = " + "not " * 1000 + "True"])
    yield "long-sum", kernel_with(["n = " + " + ".join(str(i) for i in range(2000))])
    yield "long-product", kernel_with(["n = " + " * ".join(["2"] * 70)])
    yield "power-tower", kernel_with(["n = " + " ** ".join(["2"] * 6)])
    yield "big-literal", kernel_with(["n = " + "9" * 300, "m = n // -1"])
    yield "int-edges", kernel_with(["n = (-2**63) // -1", "m = 1 << 70", "k = -(2**63) % -1"])
    yield "shifts", kernel_with(["n = " + " << ".join(["1"] * 40)])
    yield "comparisons", kernel_with(["b = " + " < ".join(str(i) for i in range(500))])
    yield "boolean", kernel_with(["b = " + " and ".join(["True"] * 800)])
    yield "ternary", kernel_with(["n = " + " if True else ".join(str(i) for i in range(300))])
    yield "comprehension", kernel_with(["n = " + "[" * 30 + "i for i in range(2)" + "]" * 30])
    yield "fstring", kernel_with(["s = f\"{" + "f'{" * 3 + "1" + "}'" * 3 + "}\""])
    yield "subscripts", kernel_with(["t = (1, 2)", "n = t" + "[0:2]" * 300 + "[0]"])
    yield "tuple", kernel_with(["t = (" + ", ".join(str(i) for i in range(2500)) + ")"])
    yield "range-loop", kernel_with(["for i in range(10**6):", "  n = i * i"])
    yield "while", kernel_with(["n = 0", "while n < 10**6:", "  n += 1"])
    yield "recursion", HEADER + "  def f(n):\n    return f(n + 1)\n  f(0)\n  return x\n"
    yield "deep-if", HEADER + "".join("  " + " " * i + "if True:\n" for i in range(120)) + "  " + " " * 120 + "pass\n"
    shape = "(" + ", ".join(["1"] * 64) + ")"
    yield "rank", kernel_with(["t = nl.ndarray(" + shape + ", dtype=nl.float32, buffer=nl.sbuf)"])
    yield "slices", kernel_with(["t = nl.load(x[" + ", ".join(["0:1"] * 40) + "])"])


def frame(message):
    message.setdefault("jsonrpc", "2.0")
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def lsp_sessions():
    uri = "file:///fuzz/k.py"
    doc = {"uri": uri}
    pos = lambda line, ch: {"line": line, "character": ch}
    rng = lambda a, b, c, d: {"start": pos(a, b), "end": pos(c, d)}
    yield "features", b"".join(frame(m) for m in [
        {"id": 1, "method": "textDocument/hover", "params": {"textDocument": doc, "position": pos(7, 4)}},
        {"id": 2, "method": "textDocument/hover", "params": {"textDocument": doc, "position": pos(8, 4)}},
        {"id": 3, "method": "textDocument/inlayHint", "params": {"textDocument": doc, "range": rng(0, 0, 12, 0)}},
        {"id": 4, "method": "textDocument/codeLens", "params": {"textDocument": doc}},
        {"id": 5, "method": "codeLens/resolve", "params": {"range": rng(5, 0, 5, 10),
                                                         "data": {"uri": uri, "version": 1, "kernel": "kernel"}}},
        {"id": 6, "method": "textDocument/codeAction", "params": {"textDocument": doc, "range": rng(7, 4, 7, 4),
                                                                "context": {"diagnostics": []}}},
        {"id": 7, "method": "codeAction/resolve", "params": {"title": "split", "data": {
            "uri": uri, "version": 1, "kernel": "kernel", "ops": [{"op": "split", "loop": "L0", "factor": 2}]}}},
        {"id": 8, "method": "workspace/executeCommand", "params": {"command": "accelopt.profile",
                                                                 "arguments": [uri, "kernel"]}},
        {"method": "$/cancelRequest", "params": {"id": 8}},
        {"id": 9, "method": "shutdown"}, {"method": "exit"}])
    yield "edits", b"".join(frame(m) for m in [
        {"method": "textDocument/didChange", "params": {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
            {"range": rng(7, 0, 7, 0), "text": "  for j in nl.affine_range(4):\n"},
            {"range": rng(0, 0, 0, 6), "text": ""}, {"text": "x = ("}]}},
        {"id": 1, "method": "textDocument/hover", "params": {"textDocument": doc, "position": pos(1, 1)}},
        {"method": "textDocument/didClose", "params": {"textDocument": doc}},
        {"id": 2, "method": "textDocument/codeLens", "params": {"textDocument": doc}}])
    yield "settings", b"".join(frame(m) for m in [
        {"method": "workspace/didChangeConfiguration", "params": {"settings": {"accelopt": {
            "target": "trn2", "inputs": {"kernel": "x=bf16[256,512]"}, "case": {"k.py": "softmax_M256_N512"},
            "suiteCases": True, "memory": "memory.db"}}}},
        {"id": 1, "method": "textDocument/codeAction", "params": {"textDocument": doc, "range": rng(7, 0, 7, 0),
                                                                "context": {"only": ["refactor.rewrite"]}}}])
    yield "framing", (b"Content-Length: -5\r\n\r\n" + b"Content-Length: 2\r\n\r\n{}" +
                      b"Content-Type: x\r\n\r\n" + b"content-length: 99999999999999999999\r\n\r\n" +
                      frame({"id": 1, "method": "textDocument/hover", "params": {"textDocument": doc,
                                                                                 "position": pos(1e9, -1)}}) +
                      b"Content-Length: 7\r\n\r\n[1,2,3]" + b"Content-Length: 12\r\n\r\n{\"id\":{},\"m\"")


def op_seeds():
    seen = set()
    for path in sorted(glob.glob(os.path.join(ROOT, "test", "*", "*.test"))):
        with open(path, encoding="utf-8", errors="replace") as f:
            for text in re.findall(r"--op '([^']*)'", f.read()):
                if text not in seen:
                    seen.add(text)
                    yield text
    for path in sorted(glob.glob(os.path.join(ROOT, "rewrites", "patterns", "*.json"))):
        with open(path) as f:
            ops = json.load(f).get("ops", [])
        yield json.dumps(ops)
    for op in [{"op": "split", "loop": "L2", "factor": 2}, {"op": "interchange", "outer": "L0", "inner": "L1"},
               {"op": "unroll", "loop": "L1", "factor": 2}, {"op": "hoist", "stmt": "S5", "out_of": "L0"},
               {"op": "fission", "loop": "L0", "at": "S7"}, {"op": "fuse", "first": "L0", "second": "L1"},
               {"op": "set_loop_kind", "loop": "L2", "kind": "sequential_range"},
               {"op": "sink", "stmt": "S4", "into": "L0"}, {"op": "shrink_buffer", "tensor": "res_sb", "dim": 0},
               {"op": "replace", "stmt": "S6", "code": "xT_tile = nl.load(xT[0:K, 0:128])"}]:
        yield json.dumps(op)
    yield json.dumps([{"op": "split", "loop": "L0", "factor": 2}, {"op": "unroll", "loop": "L1", "factor": 2}])


def memory_seeds():
    for path in [os.path.join(ROOT, "test", "LSP", "Inputs", "memory.json"),
                 os.path.join(ROOT, "test", "Memory", "Inputs", "memory.json")]:
        if os.path.exists(path):
            with open(path, "rb") as f:
                yield os.path.basename(os.path.dirname(os.path.dirname(path))) + "-memory", f.read()
    yield "empty", json.dumps({"format": "accelopt-memory", "schema_version": 2}).encode()


def kernels(dirs):
    for pattern in dirs:
        for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
            with open(path, "rb") as f:
                yield os.path.basename(path), f.read()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    target, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    seeds = []
    if target in ("frontend", "interp"):
        seeds += list(kernels(["nkibench/kernels/*.py", "test/Analysis/*.py"]))
        if target == "frontend":
            seeds += list(kernels(["nkibench/pairs/*.py", "nkibench/upstream/kernels/*.py"]))
            seeds += [("deep-" + name + ".py", text.encode()) for name, text in deep_expression_kernels()]
    elif target == "lsp":
        seeds += [("session-" + name, data) for name, data in lsp_sessions()]
    elif target == "ops":
        seeds += [("op-%03d.json" % i, text.encode()) for i, text in enumerate(op_seeds())]
    elif target == "memory-import":
        seeds += [(name + ".json", data) for name, data in memory_seeds()]
    else:
        sys.exit("unknown target " + target)
    for name, data in seeds:
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
