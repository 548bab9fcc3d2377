#!/usr/bin/env python3
"""Independent checker of a resolved package set under dpkg's multiarch rules.

Separate code from the resolver: it reads the Packages files itself and checks, for every chosen
package, that each Depends/Pre-Depends clause is satisfied by a chosen package (or a chosen
package's Provides), that no Conflicts/Breaks is violated, and that a name is installed for
several architectures only when every copy is Multi-Arch: same with one version (dpkg's rules,
lib/dpkg/depcon.c deparchsatisfied).

usage: depcheck.py --native ARCH --packages ARCH=FILE... SET_FILE
SET_FILE holds one name:arch=version per line (arch as in the Packages Architecture field).
"""
import argparse
import re
import subprocess
import sys


def stanzas(path):
    cur, last = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                if cur:
                    yield cur
                cur, last = {}, None
            elif line[0] in " \t":
                cur[last] += "\n" + line.strip()
            else:
                k, _, v = line.partition(":")
                last = k.lower()
                cur[last] = v.strip()
    if cur:
        yield cur


def vercmp(a, op, b):
    ops = {"<<": "lt", "<=": "le", "=": "eq", ">=": "ge", ">>": "gt", "<": "le", ">": "ge"}
    return subprocess.run(["dpkg", "--compare-versions", a, ops[op], b]).returncode == 0


ATOM = re.compile(r"^\s*([^\s:(]+)(?::(\S+?))?\s*(?:\(\s*(<<|<=|>=|>>|=|<|>)\s*([^\s)]+)\s*\))?\s*$")


def parse_rel(text):
    out = []
    for clause in (text or "").split(","):
        if not clause.strip():
            continue
        alts = []
        for alt in clause.split("|"):
            m = ATOM.match(alt)
            if not m:
                sys.exit("depcheck: cannot parse %r" % alt)
            alts.append(m.groups())
        out.append(alts)
    return out


def arch_ok(dep_arch, negative, implicit_arch, prov_arch, prov_ma, native):
    """dpkg's deparchsatisfied: may a package of prov_arch/prov_ma satisfy this atom?"""
    if dep_arch is None and negative:
        return True  # unqualified Conflicts/Breaks apply to every architecture
    if dep_arch is None and prov_ma == "foreign":
        return True
    if dep_arch == "any":
        return prov_ma == "allowed" or negative
    want = implicit_arch if dep_arch is None else (native if dep_arch == "native" else dep_arch)
    have = native if prov_arch == "all" else prov_arch
    want = native if want == "all" else want
    return want == have


def load_index(paths):
    """(package, architecture, version) -> stanza, from Packages files."""
    index = {}
    for path in paths:
        for s in stanzas(path):
            index[(s["package"], s["architecture"], s["version"])] = s
    return index


def check(index, native, lines):
    """Problems of the set `lines` (name:arch=version each) under dpkg's rules, as strings."""
    chosen = []
    for line in lines:
        line = line.strip()
        if not line:
            continue
        m = re.match(r"^([^:]+):([^=]+)=(.+)$", line)
        key = m.groups()
        if key not in index:
            return ["%s is not in any index" % line]
        chosen.append(index[key])
    # what each chosen package offers: (name, version or None, arch, multi-arch, owner)
    offers = {}
    for s in chosen:
        ma = s.get("multi-arch", "no")
        offers.setdefault(s["package"], []).append((s["version"], s["architecture"], ma, s))
        for alts in parse_rel(s.get("provides")):
            name, _, op, ver = alts[0]
            offers.setdefault(name, []).append((ver if op == "=" else None, s["architecture"], ma, s))
    errors = []

    def satisfied(atom, owner, negative):
        name, qual, op, ver = atom
        implicit = native if owner["architecture"] == "all" else owner["architecture"]
        hits = []
        for pver, parch, pma, prov in offers.get(name, []):
            if negative and prov["package"] == owner["package"]:
                continue  # never against itself or its own other-arch copies
            if not arch_ok(qual, negative, implicit, parch, pma, native):
                continue
            if op and (pver is None or not vercmp(pver, op, ver)):
                continue
            hits.append(prov)
        return hits

    for s in chosen:
        who = "%s:%s=%s" % (s["package"], s["architecture"], s["version"])
        for field in ("pre-depends", "depends"):
            for alts in parse_rel(s.get(field)):
                if not any(satisfied(at, s, False) for at in alts):
                    errors.append("%s: %s '%s' not satisfied" % (who, field, " | ".join(
                        x[0] + (":" + x[1] if x[1] else "") for x in alts)))
        for field in ("conflicts", "breaks"):
            for alts in parse_rel(s.get(field)):
                for hit in satisfied(alts[0], s, True):
                    errors.append("%s: %s '%s' violated by %s:%s" % (
                        who, field, alts[0][0], hit["package"], hit["architecture"]))
    names = {}
    for s in chosen:
        names.setdefault(s["package"], []).append(s)
    for name, copies in names.items():
        if len(copies) < 2:
            continue
        if any(c.get("multi-arch") != "same" for c in copies):
            errors.append("%s installed %d times but not Multi-Arch: same" % (name, len(copies)))
        if len({c["version"] for c in copies}) > 1 or len({c["architecture"] for c in copies}) < len(copies):
            errors.append("%s: Multi-Arch: same copies differ in version or repeat an arch" % name)
    return errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--native", required=True)
    ap.add_argument("--packages", action="append", default=[])
    ap.add_argument("set")
    a = ap.parse_args()
    index = load_index(spec.partition("=")[2] for spec in a.packages)
    with open(a.set) as f:
        lines = [l for l in f if l.strip()]
    errors = check(index, a.native, lines)
    for e in errors:
        print("depcheck: " + e, file=sys.stderr)
    print("depcheck: %d packages, %d problems" % (len(lines), len(errors)), file=sys.stderr)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
