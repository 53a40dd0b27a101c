#!/usr/bin/env python3
"""Write a compute-bound Accel-Sim trace (tracer version 5) whose CTAs come in waves.

Benchmark of issue 15 (docs/performance.md, `compute-waves`): CTAS CTAs of 256 threads (8 warps);
each warp loads one float per thread (coalesced), runs a chain of FFMA dependent FFMAs over four
registers and stores one float per thread (coalesced). The same bytes as
`sassim_trace::synthetic::ComputeTrace` writes for `cargo bench -p sassim-gpu --bench loaded`
(checked with the defaults).
Defaults: 2,688 CTAs, 64 FFMAs (about 60 MB of text; not committed).

Usage: scripts/gen-compute-trace.py OUT_DIR [CTAS [FFMA]]
"""
import sys

import tracegen

WARPS, LANES = 8, 32
TABLE = 0x7F0000000000
OUT = 0x7F1000000000


def main():
    if len(sys.argv) not in (2, 3, 4):
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    try:
        ctas = int(sys.argv[2]) if len(sys.argv) > 2 else 2688
        ffma = int(sys.argv[3]) if len(sys.argv) > 3 else 64
    except ValueError:
        sys.exit("CTAS and FFMA must be integers")
    if not 1 <= ctas <= 65536:
        sys.exit("CTAS must be in 1..65536")
    if not 0 <= ffma <= 4096:
        sys.exit("FFMA must be in 0..4096")
    with tracegen.create_trace(out_dir, "_Z7computePKfPf", ctas, WARPS * LANES) as f:
        for cta in range(ctas):
            f.write(f"#BEGIN_TB\n\nthread block = {cta},0,0\n\n")
            for w in range(WARPS):
                base = 4 * (cta * WARPS + w) * LANES
                lines = ["0000 ffffffff 1 R0 S2R 0 0 0 ",
                         "0010 ffffffff 1 R1 IMAD 2 R0 R0 0 0 ",
                         f"0020 ffffffff 1 R2 LDG.E 1 R1 4 1 {hex(TABLE + base)} 4 0 "]
                for k in range(ffma):
                    lines.append(f"{0x30 + 0x10 * k:04x} ffffffff 1 R{3 + k % 4} FFMA 3 R2 "
                                 f"R{3 + (k + 3) % 4} R{3 + (k + 2) % 4} 0 0 ")
                tracegen.write_warp(f, w, lines, 0x30 + 0x10 * ffma, "R3", OUT + base)
            f.write("#END_TB\n\n")
    tracegen.write_kernelslist(out_dir)


if __name__ == "__main__":
    main()
