#!/usr/bin/env python3
"""Write a memory-bound random-gather Accel-Sim trace (tracer version 5) with every SM busy.

Benchmark of issue 15 (docs/performance.md): 1,344 CTAs of 256 threads (16 per SM of the RTX A6000),
each warp gathers GATHERS floats at uniformly random 4-byte-aligned addresses of a 256 MB table (one
address per lane, address list not compressed), sums them and stores the sum coalesced. The trace is
generated, not committed (about 20 MB of text); the seed makes it the same every time.

Usage: scripts/gen-gather-trace.py OUT_DIR [GATHERS]
"""
import random
import sys

import tracegen

CTAS, WARPS, LANES = 1344, 8, 32
TABLE = 0x7F0000000000
TABLE_BYTES = 256 << 20
OUT = 0x7F1000000000


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    try:
        gathers = int(sys.argv[2]) if len(sys.argv) == 3 else 4
    except ValueError:
        sys.exit("GATHERS must be an integer")
    if not 1 <= gathers <= 64:
        sys.exit("GATHERS must be in 1..64")
    rng = random.Random(15)
    with tracegen.create_trace(out_dir, "_Z6gatherPKfPKjPf", CTAS, WARPS * LANES) as f:
        f.write("#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num "
                "[reg_srcs] mem_width [adrrescompress?] [mem_addresses] immediate\n\n")
        for cta in range(CTAS):
            f.write(f"#BEGIN_TB\n\nthread block = {cta},0,0\n\n")
            for w in range(WARPS):
                lines = ["0000 ffffffff 1 R0 S2R 0 0 0 ",
                         "0010 ffffffff 1 R1 IMAD 2 R0 R0 0 0 ",
                         "0020 ffffffff 1 R2 MOV 0 0 0 "]
                pc = 0x30
                for g in range(gathers):
                    addrs = " ".join(hex(TABLE + 4 * rng.randrange(TABLE_BYTES // 4))
                                     for _ in range(LANES))
                    lines.append(f"{pc:04x} ffffffff 1 R{4 + g % 8} LDG.E 1 R1 4 0 {addrs} 0 ")
                    pc += 0x10
                for g in range(gathers):
                    lines.append(f"{pc:04x} ffffffff 1 R2 FADD 2 R2 R{4 + g % 8} 0 0 ")
                    pc += 0x10
                tracegen.write_warp(f, w, lines, pc, "R2", OUT + 4 * (cta * WARPS + w) * LANES)
            f.write("#END_TB\n\n")
    tracegen.write_kernelslist(out_dir)


if __name__ == "__main__":
    main()
