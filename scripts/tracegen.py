"""What the synthetic trace generators (`gen-gather-trace.py`, `gen-compute-trace.py`) share: the
Accel-Sim kernel header (tracer version 5) and the kernel list, as
`sassim_trace::synthetic` writes them."""
import os
import sys


def create_trace(out_dir, name, ctas, block_threads):
    """Open OUT_DIR/kernel-1.traceg for writing (OUT_DIR created if needed; an existing trace
    is not overwritten: exit with a message) and write the header of kernel NAME with CTAS
    one-dimensional CTAs of BLOCK_THREADS threads."""
    os.makedirs(out_dir, exist_ok=True)
    trace = os.path.join(out_dir, "kernel-1.traceg")
    if os.path.exists(trace):
        sys.exit(f"{trace} exists: not overwritten")
    f = open(trace, "w")
    f.write(f"-kernel name = {name}\n-kernel id = 1\n")
    f.write(f"-grid dim = ({ctas},1,1)\n-block dim = ({block_threads},1,1)\n")
    f.write("-shmem = 0\n-nregs = 16\n-binary version = 86\n-cuda stream id = 0\n")
    f.write("-shmem base_addr = 0x00007fb139000000\n-local mem base_addr = 0x00007fb137000000\n")
    f.write("-nvbit version = 1.7\n-accelsim tracer version = 5\n-enable lineinfo = 0\n\n")
    return f


def write_kernelslist(out_dir):
    """OUT_DIR/kernelslist.g naming the one kernel trace."""
    with open(os.path.join(out_dir, "kernelslist.g"), "w") as f:
        f.write("kernel-1.traceg\n")


def write_warp(f, w, lines, pc, value_reg, out_addr):
    """Warp W's records: LINES, then a store of VALUE_REG to OUT_ADDR at PC and the EXIT after
    it."""
    lines.append(f"{pc:04x} ffffffff 0 STG.E 2 R1 {value_reg} 4 1 {hex(out_addr)} 4 0 ")
    lines.append(f"{pc + 0x10:04x} ffffffff 0 EXIT 0 0 0 ")
    f.write(f"warp = {w}\ninsts = {len(lines)}\n" + "\n".join(lines) + "\n\n")
