#!/usr/bin/env python3
"""The LTRF studies of issue 14 (docs/ltrf.md), from the results database and the listings.

    scripts/ltrf-studies.py tolerable DB       # Figure 15: tolerable main-RF latency per design
    scripts/ltrf-studies.py sensitivity DB     # Figures 17/18: registers per interval, active warps
    scripts/ltrf-studies.py conflicts          # Figure 16: conflict-free prefetches, 8/16/32 regs

The first two read `sassim results export` of the experiments `ltrf-latency` and
`ltrf-sensitivity` (run them first: scripts/ltrf-studies.sh); the third runs
`sassim ltrf analyze --renumber --json` on every sm_86 listing the repository ships.
"""
import csv
import glob
import io
import json
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SASSIM = os.environ.get("SASSIM", os.path.join(ROOT, "target", "release", "sassim"))


def export(db, experiment):
    out = subprocess.run([SASSIM, "results", "export", experiment, "--db", db],
                         check=True, capture_output=True, text=True).stdout
    cycles = {}
    for r in csv.DictReader(io.StringIO(out)):
        if r["kernel"] == "0" and r["stat"] == "cycles" and r["status"] == "done":
            cycles[(r["config"], r["input"])] = int(r["value"])
    return cycles


def params(config):
    """`design/k=v,k=v` (or just `k=v,k=v`) -> (design, {k: v})."""
    design, _, rest = config.rpartition("/") if "/" in config else ("", "", config)
    kv = dict(p.split("=", 1) for p in rest.split(",") if "=" in p)
    return design, kv


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def tolerable(db):
    cycles = export(db, "ltrf-latency")
    by = {}
    for (config, inp), c in cycles.items():
        design, kv = params(config)
        lat = int(kv.get("main_latency", kv.get("regfile.ltrf.main_latency", "1")))
        by.setdefault(design, {}).setdefault(inp, {})[lat] = c
    print("| design | mean tolerable latency (x) | min | max | IPC at 6x (geomean, vs 1x) |")
    print("|---|---:|---:|---:|---:|")
    for design in ["rfc", "ltrf", "ltrf-renumber", "ltrf-plus-renumber"]:
        tol = []
        at6 = []
        for inp, lc in sorted(by.get(design, {}).items()):
            base = lc.get(1)
            if not base:
                continue
            ok = [l for l, c in lc.items() if c <= base / 0.95]
            tol.append(max(ok))
            if 6 in lc:
                at6.append(base / lc[6])
        if tol:
            print(f"| {design} | {sum(tol) / len(tol):.1f} | {min(tol)} | {max(tol)} | {geomean(at6):.3f} |")
    print()
    print("Per input, the largest swept latency with at most 5 % IPC loss:")
    print()
    designs = ["rfc", "ltrf", "ltrf-renumber", "ltrf-plus-renumber"]
    print("| input | " + " | ".join(designs) + " |")
    print("|---|" + "---:|" * len(designs))
    inputs = sorted({i for d in by.values() for i in d})
    for inp in inputs:
        row = []
        for d in designs:
            lc = by.get(d, {}).get(inp, {})
            base = lc.get(1)
            row.append(str(max(l for l, c in lc.items() if c <= base / 0.95)) if base else "-")
        print(f"| {inp} | " + " | ".join(row) + " |")


def sensitivity(db):
    cycles = export(db, "ltrf-sensitivity")
    ideal = export(db, "ltrf-ipc")
    base = {inp: c for (config, inp), c in ideal.items() if config == "ideal-1x"}
    rows = {}
    for (config, inp), c in cycles.items():
        _, kv = params(config)
        key = (int(kv["registers_per_interval"]), int(kv["two_level_active_warps"]), int(kv["main_latency"]))
        if inp in base:
            rows.setdefault(key, []).append(base[inp] / c)
    print("| registers per interval | active warps per SM | main RF latency | IPC vs ideal RF (geomean) |")
    print("|---:|---:|---:|---:|")
    for (n, w, l), v in sorted(rows.items()):
        print(f"| {n} | {4 * w} | {l}x | {geomean(v):.3f} |")


def conflicts():
    listings = sorted(glob.glob(os.path.join(ROOT, "workloads", "*", "*_sm86.cuobjdump-sass.txt")))
    print("| registers per interval | prefetches | conflict-free (LTRF) | conflict-free (renumbered) | kernels renumbered |")
    print("|---:|---:|---:|---:|---:|")
    for n in (8, 16, 32):
        tot = free_b = free_a = 0
        done = kernels = 0
        for l in listings:
            with tempfile.TemporaryDirectory() as d:
                j = os.path.join(d, "a.json")
                subprocess.run([SASSIM, "ltrf", "analyze", l, "--registers", str(n), "--renumber", "--json", j],
                               check=True, capture_output=True)
                rep = json.load(open(j))
            for k in rep["kernels"]:
                iv = k["intervals"]
                r = k["renumbering"]
                tot += iv
                free_b += round(r["conflict_free_before"] * iv)
                free_a += round(r["conflict_free_after"] * iv)
                kernels += 1
                done += r["refused"] is None
        print(f"| {n} | {tot} | {100 * free_b / tot:.1f} % | {100 * free_a / tot:.1f} % | {done} of {kernels} |")


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in ("tolerable", "sensitivity", "conflicts"):
        sys.exit(__doc__)
    if sys.argv[1] == "conflicts":
        conflicts()
    elif len(sys.argv) < 3:
        sys.exit(__doc__)
    elif sys.argv[1] == "tolerable":
        tolerable(sys.argv[2])
    else:
        sensitivity(sys.argv[2])
