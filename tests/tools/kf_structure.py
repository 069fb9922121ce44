#!/usr/bin/env python3
"""kf_structure.py - the shape of the program folders (STYLE.md, rule 12).

    python3 tests/tools/kf_structure.py [ROOT]

Checks the tree at ROOT (default: this checkout) for three things and
prints one line for each breach:

  too long   a source file of a program folder over 800 lines (a file
             whose first lines say it is generated, "do not edit", is
             let through; tests live outside these folders);
  cycle      #include lines that lead from a file back to itself;
  cross      a file that includes another program's folder: a folder
             includes its own files and the libraries common/, proto/
             and analysis/, nothing else.

Quoted includes are resolved as the Makefile's compiler resolves them:
the including file's folder first, then -Icommon -Iproto -Ianalysis.
Angle-bracket includes are system headers and are not followed. Exits 0
when the tree keeps its shape, 1 when it does not, 2 on bad usage.
"""
import os
import re
import sys

LIBRARIES = ("common", "proto", "analysis")
PROGRAMS = ("coordinator", "compile-worker", "exec-worker", "llm-gateway", "kfctl")
SOURCES = (".c", ".h", ".cu", ".cl", ".py", ".sh")
INCLUDING = (".c", ".h", ".cu", ".cl")
MAX_LINES = 800
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
GENERATED = re.compile(r"do not edit", re.IGNORECASE)


def folder_of(rel):
    return rel.split("/", 1)[0]


def resolve(root, rel, name):
    """The path (relative to ROOT) that #include "NAME" in REL means, or None."""
    for base in (os.path.dirname(rel),) + LIBRARIES:
        path = os.path.normpath(os.path.join(base, name))
        if not path.startswith("..") and os.path.isfile(os.path.join(root, path)):
            return path
    return None


def main(argv):
    if len(argv) > 2:
        print("usage: kf_structure.py [ROOT]", file=sys.stderr)
        return 2
    root = argv[1] if len(argv) == 2 else os.path.join(os.path.dirname(__file__), "..", "..")
    root = os.path.abspath(root)
    files = []
    for top in LIBRARIES + PROGRAMS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(SOURCES):
                    files.append(os.path.relpath(os.path.join(dirpath, f), root))
    if not files:
        print("structure: no program folders under %s" % root, file=sys.stderr)
        return 2
    breaches = []
    edges = {}
    for rel in files:
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if len(lines) > MAX_LINES and not any(GENERATED.search(l) for l in lines[:5]):
            breaches.append("too long: %s: %d lines (at most %d)" % (rel, len(lines), MAX_LINES))
        if not rel.endswith(INCLUDING):
            continue
        edges[rel] = []
        for lineno, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = resolve(root, rel, m.group(1))
            if target is None:
                continue
            edges[rel].append(target)
            own, theirs = folder_of(rel), folder_of(target)
            if theirs != own and theirs not in LIBRARIES:
                breaches.append('cross: %s:%d includes "%s", a file of %s/ (%s)'
                                % (rel, lineno, m.group(1), theirs, target))
    # Cycles: a depth-first walk; a file met again while still on the
    # walk's path closes a cycle, which is named once by its members.
    state, path, seen_cycles = {}, [], set()

    def walk(node):
        state[node] = 1
        path.append(node)
        for nxt in edges.get(node, ()):
            if state.get(nxt) == 1:
                cycle = path[path.index(nxt):]
                key = frozenset(cycle)
                if key not in seen_cycles:
                    seen_cycles.add(key)
                    breaches.append("cycle: " + " -> ".join(cycle + [nxt]))
            elif nxt not in state:
                walk(nxt)
        path.pop()
        state[node] = 2

    sys.setrecursionlimit(10000)
    for node in sorted(edges):
        if node not in state:
            walk(node)
    for b in breaches:
        print(b)
    if breaches:
        print("structure: %d breaches in %d files" % (len(breaches), len(files)))
        return 1
    print("structure: %d files, none over %d lines, no include cycle, no cross-program include"
          % (len(files), MAX_LINES))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
