#!/usr/bin/env python3
"""The README's code snippets are excerpts of files that tests build and run.

A fenced block preceded by `<!-- snippet: PATH -->` must consist of lines of
PATH, compared without indentation, and without a trailing `//` or `/*`
comment when the line as written is not found (the README may comment a
line differently). Fails, naming the line, when a snippet drifts from its
file.

    readme_snippets.py README.md SOURCE_DIR
"""
import pathlib
import re
import sys


def normalize(line):
    return line.strip()


def without_comment(line):
    return re.sub(r"\s*(//|/\*).*$", "", line).strip()


def main():
    readme, root = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    text = readme.read_text()
    pattern = re.compile(r"<!-- snippet: (\S+) -->\n```[a-z]*\n(.*?)\n```", re.S)
    failures = 0
    snippets = 0
    for match in pattern.finditer(text):
        snippets += 1
        path = root / match.group(1)
        if not path.is_file():
            print(f"README snippet names {match.group(1)}, which does not exist")
            failures += 1
            continue
        source = [normalize(l) for l in path.read_text().splitlines()]
        stripped = [without_comment(l) for l in source]
        for line in match.group(2).splitlines():
            if not line.strip():
                continue
            if normalize(line) in source or without_comment(line) in stripped:
                continue
            print(f"README snippet line not in {match.group(1)}: {line.strip()}")
            failures += 1
    print(f"{snippets} README snippets checked, {failures} lines not found in their files")
    if snippets == 0:
        print("no snippets found: the README's markers are gone")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
