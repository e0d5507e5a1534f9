"""Writes the known-answer vectors of tests/vectors/*.kat as fuzzer seeds."""
import pathlib
import sys

out = pathlib.Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
for line in pathlib.Path(sys.argv[1]).read_text().splitlines():
    fields = line.split()
    if len(fields) == 5 and not line.startswith("#"):
        (out / fields[0]).write_bytes(bytes.fromhex(fields[4]))
