#!/usr/bin/env python3
"""Which family may include which: the table in builder/README.md, checked against the code.

Usage: tests/lint/deps.py [OBJDIR]   (OBJDIR is unused; `make lint` passes it to every check)

Reads the "| family | may include | holds |" table of builder/README.md and every
#include "..." in builder/*/*.[ch] and builder/main.c. Fails on
  - an include of another family's header that the table does not allow,
  - a bare include of a header that is not in the including file's family,
  - a family-qualified include of a header of the including file's own family,
  - an include path that does not exist,
  - a family folder missing from the table, or a table row naming an unknown family,
  - a circle in the table itself,
  - a circle among modules: a module is a file stem up to its first '_' (p_q.c, p_q.h and
    p_internal.h belong to module p; a header with no .c of its own is the module its stem names).
main.c wires the pipeline and may include anything.
"""

import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BUILDER = os.path.join(ROOT, "builder")
README = os.path.join(BUILDER, "README.md")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def rel(path):
    return os.path.relpath(path, ROOT)


def read_table():
    """The family table: {family: (set of families it may include, README line)}."""
    table = {}
    in_table = False
    with open(README, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not in_table:
                if line.startswith("|") and cells[:2] == ["family", "may include"]:
                    in_table = True
                continue
            if not line.startswith("|"):
                break
            if set(cells[0]) <= set("-: "):
                continue
            allowed = set() if cells[1] in ("-", "") else set(cells[1].split())
            table[cells[0]] = (allowed, lineno)
    return table


def families_on_disk():
    fams = []
    for name in sorted(os.listdir(BUILDER)):
        d = os.path.join(BUILDER, name)
        if os.path.isdir(d) and any(n.endswith((".c", ".h")) for n in os.listdir(d)):
            fams.append(name)
    return fams


def module_of(name):
    stem = os.path.splitext(name)[0]
    return stem.split("_", 1)[0]


def sources(fams):
    """(path, family) of every file checked; main.c's family is None."""
    out = [(os.path.join(BUILDER, "main.c"), None)]
    for fam in fams:
        d = os.path.join(BUILDER, fam)
        for name in sorted(os.listdir(d)):
            if name.endswith((".c", ".h")):
                out.append((os.path.join(d, name), fam))
    return out


def includes(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield lineno, m.group(1)


def find_circle(graph, start):
    """A shortest circle through start in graph {node: {succ: info}}, as start, ..., start."""
    prev = {start: None}
    queue = [start]
    while queue:
        nxt = []
        for node in queue:
            for succ in sorted(graph.get(node, {})):
                if succ == start:
                    path = [node]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return path[::-1] + [start]
                if succ not in prev:
                    prev[succ] = node
                    nxt.append(succ)
        queue = nxt
    return [start, start]


def components(graph):
    """Strongly connected components with more than one node (Tarjan, iterative)."""
    index, low, onstack, stack, comps = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, {}))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        onstack.add(root)
        while work:
            node, succs = work[-1]
            advanced = False
            for succ in succs:
                if succ not in index:
                    index[succ] = low[succ] = counter[0]
                    counter[0] += 1
                    stack.append(succ)
                    onstack.add(succ)
                    work.append((succ, iter(sorted(graph.get(succ, {})))))
                    advanced = True
                    break
                if succ in onstack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    n = stack.pop()
                    onstack.discard(n)
                    comp.append(n)
                    if n == node:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))
    return sorted(comps)


def check_table(table, fams, problems):
    readme = rel(README)
    for fam in fams:
        if fam not in table:
            problems.append(f"builder/{fam}/: family '{fam}' is not in {readme}'s family table; "
                            "add its row (what it may include, what it holds)")
    for fam, (allowed, lineno) in sorted(table.items()):
        if fam not in fams:
            problems.append(f"{readme}:{lineno}: family '{fam}' has no folder builder/{fam}/; "
                            "remove its row or create the family")
        for other in sorted(allowed):
            if other not in table:
                problems.append(f"{readme}:{lineno}: '{fam}' may include '{other}', which is not "
                                "a family of the table; fix the row")
    graph = {fam: {o: None for o in allowed if o in table} for fam, (allowed, _) in table.items()}
    circles = 0
    for comp in components(graph):
        sub = {n: {s: None for s in graph[n] if s in comp} for n in comp}
        path = find_circle(sub, comp[0])
        circles += 1
        problems.append(f"{readme}:{table[comp[0]][1]}: the family table has a circle: "
                        f"{' -> '.join(path)}; families must form a DAG, drop one direction")
    return circles


def check_include(path, fam, lineno, name, table):
    """(kind, message, included header's path) of one include; kind is None when it is fine."""
    where = f"{rel(path)}:{lineno}"
    if "/" not in name:
        own = os.path.join(BUILDER, fam, name) if fam else os.path.join(BUILDER, name)
        if os.path.isfile(own):
            return None, None, own
        elsewhere = sorted(f for f in table if os.path.isfile(os.path.join(BUILDER, f, name)))
        if elsewhere:
            return ("forbidden", f'{where}: "{name}" is not in family {fam or "main"}; write '
                    f'"{elsewhere[0]}/{name}" (if the table allows it)', None)
        folder = f"builder/{fam}/" if fam else "builder/"
        return "path", f'{where}: "{name}" does not exist in {folder}; fix the path', None
    target = os.path.join(BUILDER, name)
    if not os.path.isfile(target):
        return "path", f'{where}: "{name}" does not exist under builder/; fix the path', None
    other = name.split("/", 1)[0]
    if fam is None:
        return None, None, target
    if other == fam:
        return ("forbidden", f'{where}: "{name}" is in the same family; include it by bare name '
                f'"{name.split("/", 1)[1]}"', target)
    if other not in table.get(fam, (set(), 0))[0]:
        return ("forbidden", f'{where}: "{name}": family {fam} may not include {other} '
                f'(builder/README.md lets {fam} include: '
                f'{" ".join(sorted(table.get(fam, (set(), 0))[0])) or "-"}); pass the data in '
                "from main.c or move the shared type to a family both may include", target)
    return None, None, target


def main():
    table = read_table()
    if not table:
        print(f"deps: no '| family | may include | holds |' table in {rel(README)}")
        return 1
    fams = families_on_disk()
    problems, forbidden = [], []
    table_circles = check_table(table, fams, problems)

    # module graph: (family, module) -> {(family, module): [(file, line, header)]}
    graph = {}
    for path, fam in sources(fams):
        mod = (fam, module_of(os.path.basename(path)))
        for lineno, name in includes(path):
            kind, msg, target = check_include(path, fam, lineno, name, table)
            if kind == "forbidden":
                forbidden.append(msg)
            elif kind:
                problems.append(msg)
            if fam is None or target is None:
                continue
            tmod = (os.path.basename(os.path.dirname(target)), module_of(os.path.basename(target)))
            if tmod != mod:
                graph.setdefault(mod, {}).setdefault(tmod, []).append((rel(path), lineno, name))

    circles = []
    for comp in components(graph):
        sub = {n: {s: e for s, e in graph.get(n, {}).items() if s in comp} for n in comp}
        covered = set()
        for start in comp:
            if start in covered:
                continue
            path = find_circle(sub, start)
            covered.update(path)
            edges = []
            for a, b in zip(path, path[1:]):
                f, line, hdr = sub[a][b][0]
                edges.append(f'{f}:{line} includes "{hdr}"')
            circles.append(f"module circle {' -> '.join(m for _, m in path)}: " +
                           "; ".join(edges) + "; move what both sides need below both, or "
                           "pass it in from main.c")

    for line in forbidden + problems + circles:
        print(line)
    total_circles = len(circles) + table_circles
    print(f"deps: {len(forbidden)} forbidden includes, {total_circles} circles, "
          f"{len(problems) - table_circles} other problems")
    return 1 if forbidden or problems or circles else 0


if __name__ == "__main__":
    sys.exit(main())
