#!/usr/bin/env python3
"""The word-discovery benchmark's population (BENCHMARKS.md, "Word discovery").

Words from Debian's wamerican (/usr/share/dict/american-english), lower-cased,
matching ^[a-z']{1,MAX}$, deduplicated and sorted, shuffled with
random.Random(2024): their order is the rank. Rank r gets round(n r^-s / H)
devices (H = sum of r^-s), s = 1.1. Writes one word per line and device,
in a seeded random order, and the truth (word, count) by rank to --truth.

  zipf_words.py --devices 1000000 --out words.txt --truth truth.tsv
"""
import argparse
import random
import re
import sys


def ranked_words(dictionary, max_length):
    pattern = re.compile(r"^[a-z']{1,%d}$" % max_length)
    with open(dictionary, encoding="utf-8", errors="replace") as f:
        words = sorted({w.strip().lower() for w in f if pattern.match(w.strip().lower())})
    random.Random(2024).shuffle(words)
    return words


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--devices", type=int, default=1000000, help="n before rounding")
    parser.add_argument("--exponent", type=float, default=1.1)
    parser.add_argument("--max-length", type=int, default=10)
    parser.add_argument("--dictionary", default="/usr/share/dict/american-english")
    parser.add_argument("--out", required=True)
    parser.add_argument("--truth", required=True)
    parser.add_argument("--seed", type=int, default=1, help="order of the devices")
    args = parser.parse_args()
    words = ranked_words(args.dictionary, args.max_length)
    harmonic = sum(r ** -args.exponent for r in range(1, len(words) + 1))
    counts = [round(args.devices * r ** -args.exponent / harmonic) for r in range(1, len(words) + 1)]
    devices = [w for w, c in zip(words, counts) for _ in range(c)]
    random.Random(args.seed).shuffle(devices)
    with open(args.out, "w") as f:
        f.write("\n".join(devices) + "\n")
    with open(args.truth, "w") as f:
        for w, c in zip(words, counts):
            if c:
                f.write(f"{w}\t{c}\n")
    print(f"{len(words)} words, {len(devices)} devices", file=sys.stderr)


if __name__ == "__main__":
    main()
