#!/usr/bin/env python3
"""The collector core's layers: every include in collector/src points down.

Parses every `#include "..."` in collector/src (resolved against the
including file's folder, then collector/src), maps each file to its
top-level folder and fails (exit 1, naming the file and the include) on an
include from a folder into a higher-ranked one or into another folder of
the same rank, and on any cycle between folders. A folder missing from
LAYERS fails too, so a new folder is ranked when it is added.

  scripts/check-layers.py [--graph]   (--graph prints the folder graph)
  scripts/check-layers.py --self-test (the check fails on a crafted tree)
"""
import os
import re
import sys

# Bottom to top. Folders on one line share a rank and may not include each
# other.
LAYERS = [
    ["util"],                 # outcomes, varints, JSON writer, time text
    ["model"],                # plain types: IncomingReport/Batch, MetricConfig
    ["mechanisms"],           # one spec per mechanism family (mechanism_spec.h)
    ["config"],               # metric rules and text forms, the metrics file
    ["aggregate"],            # sufficient statistics: tallies, numeric moments
    ["store"],                # the store: interface, row format, sqlite/, postgres/
    ["ingest"],               # decode, validate, group commit
    ["estimate"],             # frequency estimates, clustering, grid histogram
    ["discovery"],            # word discovery decoders (pem, sfp)
    ["auth", "server"],       # device credentials; the HTTP server
    ["observe"],              # Prometheus registry, collector metrics, request log
    ["api", "dashboard"],     # routes and the estimate's JSON
    ["cli"],                  # the blur-collector program
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def main():
    if "--self-test" in sys.argv:
        return self_test()
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                         "collector", "src"))
    return check(root, "--graph" in sys.argv)


def check(root, graph):
    rank = {folder: i for i, line in enumerate(LAYERS) for folder in line}
    problems = []
    edges = {}  # (from, to) -> first "file -> include"
    for directory, _, names in sorted(os.walk(root)):
        for name in sorted(names):
            if not name.endswith((".h", ".cpp")):
                continue
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, root)
            folder = relative.split(os.sep)[0]
            if os.sep not in relative:
                problems.append(f"{relative}: a file outside the ranked folders")
                continue
            if folder not in rank:
                problems.append(f"{relative}: folder '{folder}' is not in LAYERS "
                                "(scripts/check-layers.py)")
                continue
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for include in INCLUDE.findall(text):
                beside = os.path.normpath(os.path.join(os.path.dirname(path), include))
                under_src = os.path.normpath(os.path.join(root, include))
                target = beside if os.path.isfile(beside) else under_src
                if not os.path.isfile(target):
                    continue  # the SDK's, the proto's or a generated header
                target_folder = os.path.relpath(target, root).split(os.sep)[0]
                if target_folder == folder or target_folder not in rank:
                    continue
                edges.setdefault((folder, target_folder), f"{relative} -> {include}")
                if rank[target_folder] > rank[folder]:
                    problems.append(f"{relative}: includes \"{include}\" from the higher "
                                    f"layer '{target_folder}' (rank {rank[target_folder]} > "
                                    f"{rank[folder]})")
                elif rank[target_folder] == rank[folder]:
                    problems.append(f"{relative}: includes \"{include}\" from '{target_folder}', "
                                    f"a folder of the same rank as '{folder}'")

    cycles = folder_cycles(edges)
    for members, cycle in cycles:
        witness = "; ".join(edges[(a, b)] for a, b in zip(cycle, cycle[1:] + cycle[:1]))
        problems.append(f"folder cycle among {{{', '.join(sorted(members))}}}, e.g. " +
                        " -> ".join(cycle + cycle[:1]) + f" ({witness})")

    if graph:
        for (a, b), witness in sorted(edges.items()):
            print(f"{a} -> {b}    e.g. {witness}")
    upward = sum(1 for p in problems if "higher layer" in p or "same rank" in p)
    print(f"collector/src: {len(edges)} folder edges, {len(cycles)} folder cycles, "
          f"{upward} includes up or across a layer")
    for problem in problems:
        print("error: " + problem)
    return 1 if problems else 0


def folder_cycles(edges):
    """The strongly connected sets of more than one folder (Tarjan), each
    with one cycle through it."""
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [(c, cycle_within(graph, set(c))) for c in components]


def cycle_within(graph, members):
    """A cycle through the strongly connected `members` (a shortest path
    back to the smallest folder)."""
    start = min(members)
    previous = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & members):
            if w == start:
                path = [v]
                while previous[path[-1]] is not None:
                    path.append(previous[path[-1]])
                return list(reversed(path))
            if w not in previous:
                previous[w] = v
                queue.append(w)
    return sorted(members)


def self_test():
    """A tree with one upward include, one include across a rank and a
    cycle must fail, naming each; the same tree without them must pass."""
    import contextlib
    import io
    import tempfile

    def tree(files):
        root = tempfile.mkdtemp()
        for path, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                f.write(text)
        return root

    def run(root):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = check(root, False)
        return status, out.getvalue()

    clean = {"util/a.h": "", "model/b.h": '#include "util/a.h"\n',
             "mechanisms/c.cpp": '#include "model/b.h"\n#include "blur/x.h"\n'}
    status, out = run(tree(clean))
    ok = status == 0 and "0 folder cycles, 0 includes up" in out
    bad = dict(clean)
    bad["util/up.h"] = '#include "mechanisms/c.cpp"\n'          # up, and a cycle
    bad["auth/a.h"] = '#include "server/s.h"\n'                 # across a rank
    bad["server/s.h"] = ""
    status, out = run(tree(bad))
    ok = ok and status == 1
    for expected in ['util/up.h: includes "mechanisms/c.cpp" from the higher layer',
                     'auth/a.h: includes "server/s.h" from \'server\', a folder of the same rank',
                     "folder cycle "]:
        if expected not in out:
            print("self-test: missing: " + expected)
            ok = False
    print("self-test: " + ("the check fails on each crafted fault" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
