"""Record Python's repr(float) for a few thousand doubles (ragloom's float_repr test data).

Run with any CPython 3 (the reference venv: /tmp/li/bin/python gen_float_repr.py).
Writes float_repr.json: {"cases": [[bits_hex, repr], ...]}; bits are the IEEE-754
double as 16 hex digits, so inf/nan/-0.0 and every bit pattern survive JSON.
"""

import json
import math
import random
import struct
from decimal import Decimal
from pathlib import Path

rng = random.Random(20240611)
values = []


def bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def from_bits(b):
    return struct.unpack("<d", struct.pack("<Q", b))[0]


def widen_f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def is_tie(x):
    """True when x's exact value lies halfway between two shortest candidates."""
    if not math.isfinite(x) or x == 0.0:
        return False
    shortest = Decimal(repr(x)).normalize()
    exact = Decimal(x).normalize()
    n = len(shortest.as_tuple().digits)
    t = exact.as_tuple()
    return len(t.digits) == n + 1 and t.digits[-1] == 5


# Specials.
values += [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 0.1, 0.5, 2.5, 0.3]
# Random bit patterns: every exponent, subnormals included (nan/inf patterns too).
values += [from_bits(rng.getrandbits(64)) for _ in range(800)]
# Random doubles at every magnitude a user might write.
for _ in range(600):
    values.append(rng.random() * 10.0 ** rng.randint(-12, 22) * rng.choice((1, -1)))
# f32 values widened to f64 (embeddings, scores): random patterns and [-1, 1).
for _ in range(500):
    x = struct.unpack("<f", struct.pack("<I", rng.getrandbits(32)))[0]
    values.append(x)
for _ in range(500):
    values.append(widen_f32(rng.uniform(-1.0, 1.0)))
for _ in range(200):
    values.append(widen_f32(rng.uniform(-1000.0, 1000.0)))
# Ties: f32-widened values whose exact expansion is halfway between two
# shortest candidates (Python rounds half to even there).
ties = []
while len(ties) < 400:
    x = widen_f32(rng.uniform(-1000.0, 1000.0) * 10.0 ** rng.randint(-3, 3))
    if is_tie(x):
        ties.append(x)
values += ties + [750.34869384765625]
# Tiny and huge: subnormal extremes, normal boundaries, powers of ten and two.
values += [5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308,
           1.7976931348623157e308, -1.7976931348623157e308]
values += [10.0 ** k for k in range(-323, 309)]
values += [2.0 ** k for k in range(-1074, 1024, 7)]
# Integers as floats, exact and past 2**53.
values += [float(i) for i in range(0, 101)]
values += [float(rng.randint(-(2 ** 53), 2 ** 53)) for _ in range(200)]
values += [float(rng.randint(0, 10 ** 22)) for _ in range(100)]
values += [123456789012345.0, 1234567890123456.0, 9007199254740993.0]
# The fixed/exponent switch: repr is fixed for 1e-4 <= |x| < 1e16.
for edge in (1e16, 1e-4, 1e15, 1e-5):
    b = bits(edge)
    for d in range(-5, 6):
        values.append(from_bits(b + d))
values += [9999999999999998.0, 9999999999999999.0, 1e16 - 2, 0.0001, 9.9999e-05,
           0.00010000000000000002, 0.00009999999999999999, 1.5e16, 1.5e-5]

seen = set()
cases = []
for v in values:
    b = bits(v)
    if b in seen:
        continue
    seen.add(b)
    cases.append([f"{b:016x}", repr(v)])

# Node hashes over metadata holding such floats (LlamaIndex hashes str(metadata)).
from llama_index.core.schema import Document, TextNode  # noqa: E402

metadata = {"score": 750.34869384765625, "w": [0.1, 1e-05, 1e16, -524.07073974609375]}
hashes = [
    {"kind": "text_node", "text": "hello", "metadata": metadata,
     "hash": TextNode(text="hello", metadata=metadata).hash},
    {"kind": "document", "text": "hello", "metadata": {"score": 750.34869384765625},
     "hash": Document(text="hello", metadata={"score": 750.34869384765625}).hash},
]

out = Path(__file__).with_name("float_repr.json")
lines = ",\n".join(json.dumps(c) for c in cases)
out.write_text("{\"hashes\": " + json.dumps(hashes) + ",\n\"cases\": [\n" + lines + "\n]}\n")
print(f"{len(cases)} cases ({len(ties)} ties) -> {out}")
