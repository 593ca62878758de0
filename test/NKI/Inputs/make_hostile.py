"""Writes the reliability report's D2/D3/D10 kernels into the directory given: deep nesting, long
operator chains, and trace-time integers past 64 bits."""
import os
import sys

HEAD = "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n\n@nki.jit\ndef kernel(x):\n"
TAIL = ("  out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)\n"
        "  nl.store(out, value=nl.load(x))\n  return out\n")
CASES = {
    "deep_paren.py": "  a = " + "(" * 10000 + "1" + ")" * 10000 + "\n",
    "deep_list.py": "  a = " + "[" * 10000 + "1" + "]" * 10000 + "\n",
    "unary.py": "  a = " + "-" * 5000 + "1\n",
    "long_sum.py": "  a = " + "+".join(["1"] * 5000) + "\n",
    "deep_if.py": "".join("  " + " " * i + "if x.shape[0] > 0:\n" for i in range(600)) + " " * 602 + "pass\n",
    "floordiv.py": "  a = (-9223372036854775807 - 1) // -1\n",
    "mod.py": "  a = (-9223372036854775807 - 1) % -1\n  assert a == 0\n",
    "pow.py": "  n = 10**400\n  y = nl.ndarray((128, n), dtype=x.dtype, buffer=nl.sbuf)\n",
    "wrap.py": "  n = 2**64 + 512\n  assert n > 10**6\n",
    "literal.py": "  n = 1" + "0" * 400 + "\n",
    "edge.py": "  a = 2**62 + (2**62 - 1)\n  assert a == 9223372036854775807\n  assert -7 // 2 == -4 and -7 % 2 == 1\n"
               "  assert 1 << 62 == 4611686018427387904 and -1 >> 80 == -1\n",
}
for name, body in CASES.items():
    with open(os.path.join(sys.argv[1], name), "w") as f:
        f.write(HEAD + body + TAIL)
