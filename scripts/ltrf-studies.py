#!/usr/bin/env python3
"""The LTRF studies of issue 14 (docs/ltrf.md), from the results database and the listings.

    scripts/ltrf-studies.py tolerable DB [SVG] # Figure 15: tolerable main-RF latency per design
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


def line_svg(path, series, xs, xlabel, ylabel):
    """A line chart: `series` = [(name, [y per x])]."""
    w, h, l, r, t, b = 560, 340, 60, 150, 20, 50
    ymax = max(max(ys) for _, ys in series) * 1.05
    ymin = min(0.0, min(min(ys) for _, ys in series))
    px = lambda i: l + (w - l - r) * i / max(1, len(xs) - 1)
    py = lambda y: t + (h - t - b) * (1 - (y - ymin) / (ymax - ymin))
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">',
           f'<rect width="{w}" height="{h}" fill="white"/>']
    for k in range(6):
        y = ymin + (ymax - ymin) * k / 5
        out.append(f'<line x1="{l}" x2="{w - r}" y1="{py(y):.1f}" y2="{py(y):.1f}" stroke="#ddd"/>'
                   f'<text x="{l - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{y:.2f}</text>')
    for i, x in enumerate(xs):
        out.append(f'<text x="{px(i):.1f}" y="{h - b + 16}" text-anchor="middle">{x}</text>')
    out.append(f'<text x="{(l + w - r) / 2}" y="{h - 10}" text-anchor="middle">{xlabel}</text>')
    out.append(f'<text x="14" y="{(t + h - b) / 2}" transform="rotate(-90 14 {(t + h - b) / 2})" text-anchor="middle">{ylabel}</text>')
    for n, (name, ys) in enumerate(series):
        c = colors[n % len(colors)]
        pts = " ".join(f"{px(i):.1f},{py(y):.1f}" for i, y in enumerate(ys))
        out.append(f'<polyline fill="none" stroke="{c}" stroke-width="2" points="{pts}"/>')
        out.append(f'<text x="{w - r + 8}" y="{t + 14 + 16 * n}" fill="{c}">{name}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def tolerable(db, svg=None):
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
    if svg:
        lats = sorted({l for d in by.values() for lc in d.values() for l in lc})
        series = []
        for design in ["rfc", "ltrf", "ltrf-renumber", "ltrf-plus-renumber"]:
            d = by.get(design, {})
            series.append((design, [geomean([lc[1] / lc[l] for lc in d.values() if 1 in lc and l in lc]) for l in lats]))
        line_svg(svg, series, lats, "main register file latency (x today's)", "IPC vs the same design at 1x (geomean)")
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
        tolerable(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    else:
        sensitivity(sys.argv[2])
