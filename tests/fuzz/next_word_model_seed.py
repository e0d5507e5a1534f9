"""Writes next_word_model_fuzz's seeds into DIR: the known-answer model of
tests/vectors/next_word_model.kat (written by the trainer's export) as the
file itself (flags 0, and 1: CRC rewritten), and small built models (flags
3: header from the dimension bytes, CRC rewritten; see the fuzzer's
comment). Usage: next_word_model_seed.py KAT DIR"""
import os
import sys

kat, out = sys.argv[1], sys.argv[2]
with open(kat) as f:
    model = next(bytes.fromhex(line.split()[1]) for line in f if line.startswith("model "))
os.makedirs(out, exist_ok=True)
seeds = {
    "kat": b"\x00" + model,
    "kat-crc": b"\x01" + model,
    # vocab 2 + 30, embedding 1 + 7, hidden 1 + 7, 2 special tokens, exact size;
    # the payload from the known-answer model's bytes (weights of real scale).
    "built-32": b"\x03" + bytes([30, 7, 7, 2, 4]) + model[40:40 + 1900],
    # The smallest: vocab 2, widths 1, no special token.
    "built-2": b"\x03" + bytes([0, 0, 0, 0, 4]) + bytes(range(1, 60)),
}
for name, data in seeds.items():
    with open(os.path.join(out, "seed-" + name), "wb") as f:
        f.write(data)
