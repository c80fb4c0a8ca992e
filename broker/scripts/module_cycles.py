#!/usr/bin/env python3
"""Import cycles between the top-level modules of broker/src.

Reads every .rs file under broker/src (or the dir given), maps it to its top-level module (`broker/src/group/x.rs`
-> `group`, `broker/src/server.rs` -> `server`; lib.rs and main.rs are the crate roots and are skipped), and
collects every `crate::NAME` path (in `use crate::...`, `use crate::{a, b::c}` and inline `crate::x::y` paths).
Prints each strongly connected component with more than one module (a cycle) and the count; exit status 1 when
there is any. Usage: broker/scripts/module_cycles.py [broker/src]
"""
import os
import re
import sys


def top_module(root, path):
    rel = os.path.relpath(path, root)
    parts = rel.split(os.sep)
    name = parts[0][:-3] if parts[0].endswith(".rs") else parts[0]
    return None if name in ("lib", "main") else name


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def crate_refs(text):
    """Top-level module names referenced through `crate::`."""
    refs = set()
    # use crate::{a, b::c, d::{e, f}};  -> a, b, d (only the first segment of each top-level item)
    for m in re.finditer(r"\bcrate::\{", text):
        depth, i, item, items = 1, m.end(), "", []
        while i < len(text) and depth:
            c = text[i]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            if depth == 1 and c == ",":
                items.append(item)
                item = ""
            elif depth >= 1 and not (depth == 1 and c == "}"):
                item += c
            i += 1
        items.append(item)
        for it in items:
            first = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)", it)
            if first:
                refs.add(first.group(1))
    for m in re.finditer(r"\bcrate::([A-Za-z_][A-Za-z0-9_]*)", text):
        refs.add(m.group(1))
    return refs


def graph(root):
    mods = set()
    for entry in os.listdir(root):
        p = os.path.join(root, entry)
        if entry.endswith(".rs") or os.path.isdir(p):
            m = top_module(root, p)
            if m:
                mods.add(m)
    edges = {m: set() for m in mods}
    for dirpath, _, files in os.walk(root):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(dirpath, f)
            src = top_module(root, path)
            if src is None:
                continue
            with open(path, encoding="utf-8") as fh:
                text = strip_comments(fh.read())
            for r in crate_refs(text):
                if r in mods and r != src:
                    edges[src].add(r)
    return edges


def sccs(edges):
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "src")
    edges = graph(root)
    cycles = [c for c in sccs(edges) if len(c) > 1]
    for c in cycles:
        inner = {m: sorted(edges[m] & set(c)) for m in c}
        print("cycle: " + ", ".join(c))
        for m in c:
            print(f"  {m} -> {', '.join(inner[m])}")
    print(f"{len(cycles)} cycle(s) among {len(edges)} top-level modules")
    return 1 if cycles else 0


if __name__ == "__main__":
    sys.exit(main())
