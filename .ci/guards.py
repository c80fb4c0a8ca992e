#!/usr/bin/env python3
"""The house lines CI keeps (STYLE.md, "Lines that keep the house standing"), each exception named in
`.ci/guards-allow.txt` with its reason:

- `file-lines`: no production file over 800 lines (test modules and test-only files not counted);
- `fn-lines`: no production function over 100 lines, from its `fn` line to its closing brace;
- `module-cycle`: no import cycle between the top-level modules of a crate (`crate::a` -> `crate::b` -> `crate::a`);
- `file-cycle`: no import cycle between the files of a crate (a file's `crate::`/`super::`/`self::` paths resolved to
  the file that defines the module they name; a module's `mod child;` declaration is not an import).

Production code: `src/` of the workspace crates (`storage`, `metadata`, `tiering`, `broker`, the root package),
without `tests.rs`/`tests/` files, `#[cfg(test)]` items and the vendored codec. Prints every finding and a summary;
exit status 1 when there is a finding the allow-list does not name, or an allow-list line that matches nothing
(so the list never outlives its exceptions).

Usage: .ci/guards.py [--report]   (--report: also print the figures: files over 500/800, functions over 100)
"""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
CRATES = {"storage": "storage/src", "metadata": "metadata/src", "tiering": "tiering/src",
          "broker": "broker/src", "strata": "src"}
MAX_FILE, MAX_FN = 800, 100


def strip(text):
    """`text` with comments, string and char literals blanked (newlines kept, so line numbers hold)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
            continue
        if text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
            continue
        m = re.match(r'b?r(#*)"', text[i:i + 260]) if c in "rb" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")) else None
        if m:
            end = text.find('"' + m.group(1), i + m.end())
            end = n if end < 0 else end + 1 + len(m.group(1))
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
            continue
        if c == "'":
            if text.startswith("\\", i + 1):
                j = text.find("'", i + 3)
                out.append("' '")
                i = j + 1
                continue
            if i + 2 < n and text[i + 2] == "'":
                out.append("' '")
                i += 3
                continue
        out.append(c)
        i += 1
    return "".join(out)


def block_end(code, open_idx):
    """Index of the brace closing the one at `open_idx`."""
    depth = 0
    for j in range(open_idx, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(code) - 1


def without_test_items(code):
    """`code` with every `#[cfg(test)]` item blanked (newlines kept), and how many lines those items span."""
    chars, test_lines = list(code), 0
    for m in re.finditer(r"#\[cfg\(test\)\]", code):
        j = m.end()
        brace, semi = code.find("{", j), code.find(";", j)
        if semi >= 0 and (brace < 0 or semi < brace):
            end = semi
        else:
            end = block_end(code, brace)
        test_lines += code.count("\n", m.start(), end) + 1
        for k in range(m.start(), end + 1):
            if chars[k] != "\n":
                chars[k] = " "
    return "".join(chars), test_lines


def production_files():
    for crate, src in CRATES.items():
        base = os.path.join(ROOT, src)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d != "tests")
            for f in sorted(filenames):
                if f.endswith(".rs") and f != "tests.rs":
                    path = os.path.join(dirpath, f)
                    yield crate, base, os.path.relpath(path, ROOT)


def functions(code):
    """(name, first line, last line) of every fn with a body."""
    for m in re.finditer(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)", code):
        depth, j = 0, m.end()
        while j < len(code):  # the signature: find its body's `{` (or `;` for a bodiless declaration)
            ch = code[j]
            if ch in "(<[":
                depth += 1
            elif ch in ")>]":
                depth -= 1 if not (ch == ">" and code[j - 1] == "-") else 0
            elif ch == ";" and depth <= 0:
                j = -1
                break
            elif ch == "{" and depth <= 0:
                break
            j += 1
        if j < 0 or j >= len(code):
            continue
        end = block_end(code, j)
        yield m.group(1), code.count("\n", 0, m.start()) + 1, code.count("\n", 0, end) + 1


def module_path(base, path):
    rel = os.path.relpath(os.path.join(ROOT, path), base)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib", "main"):
        rel = rel[:-1]
    return tuple(rel)


def refs(code, here):
    """Module paths (tuples) named by `crate::`, `super::` and `self::` paths in `code`, from module `here`."""
    out = set()

    def add(prefix, rest):
        parts = [p for p in re.split(r"\s*::\s*", rest) if p]
        out.add(tuple(prefix) + tuple(parts))

    def expand(prefix, body):
        # body of a `{...}` group: items separated by top-level commas, each a path or a nested group
        depth, item, items = 0, "", []
        for ch in body:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                items.append(item)
                item = ""
            else:
                item += ch
        items.append(item)
        for it in items:
            it = it.strip()
            if not it:
                continue
            g = re.match(r"([\w\s:]*?)::\s*\{(.*)\}$", it, re.S)
            if g:
                expand(prefix + [p for p in re.split(r"\s*::\s*", g.group(1).strip()) if p], g.group(2))
            else:
                name = re.split(r"\s+as\s+", it)[0].strip()
                if name not in ("self", "*"):
                    add(prefix, name)
                else:
                    out.add(tuple(prefix))

    for m in re.finditer(r"\b(crate|super|self)((?:\s*::\s*(?:super|\w+))*)\s*::\s*(\{|\w+)", code):
        head, mid, last = m.group(1), m.group(2), m.group(3)
        if head == "crate":
            prefix = []
        elif head == "self":
            prefix = list(here)
        else:
            prefix = list(here[:-1])
        segs = [p for p in re.split(r"\s*::\s*", mid) if p]
        while segs and segs[0] == "super":
            prefix = prefix[:-1]
            segs = segs[1:]
        prefix += segs
        if last == "{":
            expand(prefix, code[m.end():block_end(code, m.end() - 1)])
        else:
            add(prefix, last)
    return out


def sccs(graph):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
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
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def findings():
    per_crate, lengths, fns = {}, {}, []
    for crate, base, path in production_files():
        with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
            raw = fh.read()
        code, test_lines = without_test_items(strip(raw))
        lines = raw.count("\n") - test_lines
        lengths[path] = lines
        for name, first, last in functions(code):
            fns.append((path, name, first, last - first + 1))
        per_crate.setdefault(crate, []).append((path, module_path(base, path), code))
    out = []
    for path, n in sorted(lengths.items()):
        if n > MAX_FILE:
            out.append(("file-lines", path, f"{n} lines (test items excluded) > {MAX_FILE}"))
    for path, name, first, n in fns:
        if n > MAX_FN:
            out.append(("fn-lines", f"{path}:{name}", f"{n} lines (from line {first}) > {MAX_FN}"))
    for crate, files in sorted(per_crate.items()):
        mods = {m: p for p, m, _ in files}
        fgraph, mgraph = {}, {}
        for path, here, code in files:
            for r in refs(code, here):
                target = next((r[:k] for k in range(len(r), 0, -1) if r[:k] in mods), None)
                if target is None:
                    continue
                if target != here:
                    fgraph.setdefault(path, set()).add(mods[target])
                if here and target and here[0] != target[0]:
                    mgraph.setdefault(here[0], set()).add(target[0])
        for comp in sccs(mgraph):
            out.append(("module-cycle", f"{crate}: {' <-> '.join(comp)}", "top-level modules import each other"))
        for comp in sccs(fgraph):
            out.append(("file-cycle", f"{crate}: {' <-> '.join(comp)}", "files import each other"))
    return out, lengths, fns


def allow_list():
    path = os.path.join(ROOT, ".ci", "guards-allow.txt")
    entries = []
    if os.path.exists(path):
        for n, line in enumerate(open(path, encoding="utf-8"), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            m = re.match(r"(\S+)\s+(.+?)\s+--\s+(.+)$", line)
            if not m:
                sys.exit(f".ci/guards-allow.txt:{n}: expected `KIND SUBJECT -- REASON`, got {line!r}")
            entries.append((m.group(1), m.group(2), m.group(3), n))
    return entries


def main():
    out, lengths, fns = findings()
    allowed = allow_list()
    used, bad = set(), []
    for kind, subject, what in out:
        hit = next((a for a in allowed if a[0] == kind and a[1] == subject), None)
        if hit:
            used.add(hit[3])
            print(f"allowed  {kind:12} {subject}: {what} ({hit[2]})")
        else:
            bad.append((kind, subject, what))
            print(f"FAIL     {kind:12} {subject}: {what}")
    stale = [a for a in allowed if a[3] not in used]
    for kind, subject, _, n in stale:
        print(f"FAIL     allow-list line {n} ({kind} {subject}) matches nothing: delete it")
    if "--report" in sys.argv:
        over500 = sum(1 for n in lengths.values() if n > 500)
        over800 = sum(1 for n in lengths.values() if n > MAX_FILE)
        long_fns = sum(1 for f in fns if f[3] > MAX_FN)
        print(f"figures: {len(lengths)} production files, {over500} over 500 lines, {over800} over {MAX_FILE}; "
              f"{len(fns)} functions, {long_fns} over {MAX_FN} lines")
    kinds = {}
    for kind, *_ in out:
        kinds[kind] = kinds.get(kind, 0) + 1
    summary = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) or "none"
    print(f"house guards: {len(out)} finding(s) ({summary}), {len(out) - len(bad)} allowed, {len(bad)} not allowed, "
          f"{len(stale)} stale allow-list line(s)")
    sys.exit(1 if bad or stale else 0)


if __name__ == "__main__":
    main()
