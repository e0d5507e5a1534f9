#!/usr/bin/env python3
"""New-word discovery as a keyboard fleet does it: each simulated device is
a user who typed TYPED random entries of the fortunes corpus (Debian's
fortunes and fortunes-min, all files), and its keyboard knows the words of
a dictionary (the public model's vocabulary). The device reports the new
word it typed most often (a word outside the dictionary, 1..MAX characters
of [a-z'], ties going to the first typed), or "'" when it typed none: the SDK's
reserved word, which the collector reads as "no new word". Every device
reports exactly once, so whether a report exists never depends on the text.

Words: the text lower-cased, split on anything but letters, digits and
apostrophes between them (the trainer's tokenizer for ASCII text); a word
with a digit is not reportable. Writes the devices' words (one per line)
and the truth (word, devices) by decreasing count.

  new_words.py --dictionary VOCAB --devices N --out words.txt --truth truth.tsv
               [--typed 16] [--max-length 12] [--seed 1]
"""
import argparse
import collections
import itertools
import multiprocessing
import os
import random
import re

NO_NEW_WORD = "'"
WORD = re.compile(r"[a-z0-9]+(?:'[a-z0-9]+)*")
REPORTABLE = re.compile(r"[a-z']+")


def read_entries(directory):
    entries = []
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if "." in name or not os.path.isfile(path):
            continue  # the .dat indexes, .u8 links
        with open(path, encoding="utf-8", errors="replace") as f:
            entries += [e for e in f.read().split("\n%\n") if e.strip()]
    return entries


CHUNK = 10000
_new_words = None


def _share(new_words):
    global _new_words
    _new_words = new_words


def _devices(chunk):
    seed, index, devices, typed_entries = chunk
    rng = random.Random(f"{seed}/{index}")
    reports = []
    for _ in range(devices):
        typed = collections.Counter(itertools.chain.from_iterable(
            rng.choices(_new_words, k=typed_entries)))
        # Ties: the first typed (the entries come in random order).
        reports.append(typed.most_common(1)[0][0] if typed else NO_NEW_WORD)
    return reports


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dictionary", required=True,
                        help="the keyboard's words: a vocabulary file, one word per line")
    parser.add_argument("--directory", default="/usr/share/games/fortunes")
    parser.add_argument("--devices", type=int, required=True)
    parser.add_argument("--typed", type=int, default=16, help="fortune entries each user typed")
    parser.add_argument("--max-length", type=int, default=12)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", required=True)
    parser.add_argument("--truth", required=True)
    args = parser.parse_args()
    with open(args.dictionary, encoding="utf-8") as f:
        known = {line.rstrip("\n") for line in f if not line.startswith("#")}
    new_words = []  # per entry: its reportable words outside the dictionary
    for entry in read_entries(args.directory):
        new_words.append([w for w in WORD.findall(entry.lower())
                          if w not in known and len(w) <= args.max_length
                          and REPORTABLE.fullmatch(w)])
    # Devices in chunks, each chunk its own seeded stream: the same devices
    # whatever the number of processes drawing them.
    chunks = [(args.seed, c, min(CHUNK, args.devices - c * CHUNK), args.typed)
              for c in range((args.devices + CHUNK - 1) // CHUNK)]
    with multiprocessing.Pool(initializer=_share, initargs=(new_words,)) as pool:
        reports = [word for chunk in pool.map(_devices, chunks) for word in chunk]
    with open(args.out, "w") as f:
        f.write("\n".join(reports) + "\n")
    with open(args.truth, "w") as f:
        for word, count in sorted(collections.Counter(reports).items(), key=lambda wc: (-wc[1], wc[0])):
            f.write(f"{word}\t{count}\n")


if __name__ == "__main__":
    main()
