#!/usr/bin/env python3
"""Word discovery on a real word distribution: every word occurrence of the
fortunes corpus (Debian's fortunes and fortunes-min, the trainer's default
demo corpus) is one device. Words are the corpus lower-cased, split on
anything but [a-z'], stripped of leading and trailing apostrophes, and kept
when 1..MAX characters long. Writes the devices (in a seeded random order)
and the truth (word, count) by decreasing count.

  corpus_words.py --out words.txt --truth truth.tsv [--max-length 16]
"""
import argparse
import collections
import os
import random
import re

FILES = ["art", "ascii-art", "computers", "cookie", "debian", "definitions", "disclaimer", "drugs",
         "education", "ethnic", "food", "goedel", "humorists", "kids", "knghtbrd", "law", "linux",
         "linuxcookie", "love", "magic", "medicine", "men-women", "miscellaneous", "news",
         "paradoxum", "people", "perl", "pets", "platitudes", "politics", "pratchett", "science",
         "songs-poems", "sports", "startrek", "tao", "translate-me", "wisdom", "work", "zippy",
         "fortunes", "literature", "riddles"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--directory", default="/usr/share/games/fortunes")
    parser.add_argument("--max-length", type=int, default=16)
    parser.add_argument("--out", required=True)
    parser.add_argument("--truth", required=True)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    words = []
    for name in sorted(FILES):
        path = os.path.join(args.directory, name)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for token in re.split(r"[^a-z']+", f.read().lower()):
                token = token.strip("'")
                if 1 <= len(token) <= args.max_length:
                    words.append(token)
    counts = collections.Counter(words)
    random.Random(args.seed).shuffle(words)
    with open(args.out, "w") as f:
        f.write("\n".join(words) + "\n")
    with open(args.truth, "w") as f:
        for word, count in sorted(counts.items(), key=lambda wc: (-wc[1], wc[0])):
            f.write(f"{word}\t{count}\n")


if __name__ == "__main__":
    main()
