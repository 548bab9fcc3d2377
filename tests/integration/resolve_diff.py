#!/usr/bin/env python3
"""Differential test of the resolver against apt on real indexes.

A seeded generator of random requests (a base set, one to three packages of the primary or the
auxiliary architecture, sometimes with Recommends) over the indexes that tests/bench/resolve-data.sh
fetched for each arch pair. Each request is resolved by mkimage's resolver (build/tools/resolve) and
by `apt-get -s install` on the same lists; mkimage's set must pass depcheck.py, and the two sets are
compared. Prints one line per request and a summary: the agreement where apt solves, and the
resolve-time ratio against apt.

usage: resolve_diff.py --resolve BIN [--baseline BIN] [--seed N] [--count N] [--min-agree PCT]
                      DATA_DIR...
--baseline also resolves each request with another build (the one before a change) and reports
its agreement on the same requests. Exit 1 when a set of mkimage's breaks dpkg's rules, mkimage
refuses what apt solves, or the agreement is below --min-agree.
"""
import argparse
import glob
import os
import random
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import depcheck  # noqa: E402

BASES = ("none", "essential", "required", "important")
INST = re.compile(r"^Inst ([^ :]+)(?::\S+)? \((\S+) [^[]*\[([^]]+)\]")


class Pair:
    def __init__(self, d):
        conf = open(os.path.join(d, "apt.conf")).read()
        self.conf = os.path.join(d, "apt.conf")
        self.primary = re.search(r'APT::Architecture "([^"]+)"', conf).group(1)
        archs = re.findall(r'"([^"]+)";', re.search(r"APT::Architectures \{([^}]*)\}", conf).group(1))
        self.aux = [a for a in archs if a != self.primary][0]
        self.files = {a: sorted(glob.glob(os.path.join(d, "lists", "*_binary-%s_Packages" % a)))
                      for a in (self.primary, self.aux)}
        self.index = depcheck.load_index(f for fs in self.files.values() for f in fs)
        names = {a: set() for a in self.files}
        self.base = {b: set() for b in BASES}
        for (name, arch, _), s in self.index.items():
            for a in self.files:
                if arch == a or (arch == "all" and a == self.primary):
                    names[a].add(name)
            if arch not in (self.primary, "all"):
                continue
            ess = s.get("essential") == "yes"
            prio = s.get("priority")
            for i, b in enumerate(BASES[1:], 1):
                if ess or (i >= 2 and prio == "required") or (i >= 3 and prio == "important"):
                    self.base[b].add(name)
        self.names = {a: sorted(n) for a, n in names.items()}
        self.args = []
        for a, fs in self.files.items():
            for f in fs:
                self.args += ["--release", os.path.basename(f).split("_main_binary-")[0],
                              "--packages", "%s=%s" % (a, f)]
        self.name = "%s+%s" % (self.primary, self.aux)


def request(rng, pair):
    base = rng.choice(BASES)
    rec = rng.random() < 0.15
    pkgs = []
    for _ in range(rng.randint(1, 3)):
        if rng.random() < 0.2:
            pkgs.append(rng.choice(pair.names[pair.aux]) + ":" + pair.aux)
        else:
            pkgs.append(rng.choice(pair.names[pair.primary]))
    return base, rec, pkgs


def run(cmd, env=None):
    t = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    return p, time.monotonic() - t


def ours(binary, pair, base, rec, pkgs):
    cmd = [binary, "--primary", pair.primary, "--arch", pair.aux] + pair.args + ["--base", base]
    cmd += ["--recommends"] if rec else []
    for p in pkgs:
        cmd += ["--install", p]
    p, t = run(cmd)
    if p.returncode:
        return None, t, p.stderr.strip().splitlines()[-1:] or ["exit %d" % p.returncode]
    return sorted(l for l in p.stdout.splitlines() if l), t, None


def apt(pair, base, rec, pkgs):
    env = dict(os.environ, APT_CONFIG=pair.conf)
    cmd = ["apt-get", "-s", "-q", "-o", "APT::Install-Recommends=%d" % rec, "install"]
    p, t = run(cmd + sorted(pair.base[base]) + pkgs, env)
    if p.returncode:
        err = [l for l in (p.stdout + p.stderr).splitlines() if l.startswith("E:")]
        return None, t, err[:1] or ["exit %d" % p.returncode]
    out = []
    for line in p.stdout.splitlines():
        m = INST.match(line)
        if m:
            out.append("%s:%s=%s" % (m.group(1), m.group(3), m.group(2)))
    return sorted(out), t, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--resolve", required=True)
    ap.add_argument("--baseline")
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--count", type=int, default=24)
    ap.add_argument("--min-agree", type=float, default=0.0)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    pairs = [Pair(d) for d in a.dirs]
    rng = random.Random(a.seed)
    solved = agree = bad = base_agree = 0
    t_ours, t_apt = [], []
    for i in range(a.count):
        pair = pairs[i % len(pairs)]
        base, rec, pkgs = request(rng, pair)
        what = "%s base=%s%s %s" % (pair.name, base, " +rec" if rec else "", " ".join(pkgs))
        o, to, oerr = ours(a.resolve, pair, base, rec, pkgs)
        p, tp, perr = apt(pair, base, rec, pkgs)
        if a.baseline:
            b = ours(a.baseline, pair, base, rec, pkgs)[0]
            base_agree += p is not None and b == p
            what += " (baseline: %s)" % ("same" if b == p else "differs")
        what += " [%.1f s, apt %.1f s]" % (to, tp)
        t_ours.append(to)
        t_apt.append(tp)
        if o is not None:
            errors = depcheck.check(pair.index, pair.primary, o)
            if errors:
                bad += 1
                print("BROKEN   %s: %s" % (what, errors[0]))
        if p is None:
            print("apt-fail %s: apt: %s; mkimage: %s" % (
                what, perr[0], oerr[0] if oerr else "%d packages" % len(o)))
            continue
        solved += 1
        if o is None:
            bad += 1
            print("REFUSED  %s: %s" % (what, oerr[0]))
        elif o == p:
            agree += 1
            print("same     %s: %d packages" % (what, len(o)))
        else:
            so, sp = set(o), set(p)
            print("DIFF     %s: %d vs apt %d; mkimage only: %s; apt only: %s" % (
                what, len(o), len(p), " ".join(sorted(so - sp)[:6]) or "-",
                " ".join(sorted(sp - so)[:6]) or "-"))
    pct = 100.0 * agree / solved if solved else 100.0
    mo, ma = statistics.median(t_ours), statistics.median(t_apt)
    print("agreement: %d of %d requests apt solves (%.1f%%), %d apt refuses; %d broken/refused; "
          "resolve time %.1f s vs apt %.1f s, median %.2f s vs %.2f s (%.2fx apt's)" % (
              agree, solved, pct, a.count - solved, bad, sum(t_ours), sum(t_apt), mo, ma,
              mo / ma if ma else 0))
    if a.baseline:
        print("baseline agreement: %d of %d (%.1f%%)" % (
            base_agree, solved, 100.0 * base_agree / solved if solved else 100.0))
    sys.exit(1 if bad or pct < a.min_agree else 0)


if __name__ == "__main__":
    main()
