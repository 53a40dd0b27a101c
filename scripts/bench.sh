#!/usr/bin/env bash
# Loaded-GPU benchmark set (issue 15; method in docs/performance.md). Runs each benchmark with
# `sassim run --jobs 1`, once with `--threads 1` and once with `--threads $THREADS` (default: all
# cores), and prints the simulator's own speed line plus peak RSS (GNU time).
# Usage: scripts/bench.sh [SASSIM_BINARY] [BFS_TRACE_DIR] [GATHER_TRACE_DIR] [COMPUTE_TRACE_DIR]
#   (the gather trace: scripts/gen-gather-trace.py DIR 1; run for 40,000 cycles;
#    the compute-bound trace in waves: scripts/gen-compute-trace.py DIR; run whole)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$repo/target/release/sassim}
bfs=${2:-/work/shared/traces/bfs-sm80-v3}
gather=${3:-}
compute=${4:-}
threads=${THREADS:-$(nproc)}
out=$(mktemp -d)
run() {
    local name=$1; shift
    for t in 1 "$threads"; do
        echo "== $name, $t thread(s)"
        rm -f "$out/$name.json"
        # Exit code 3 = stopped at --max-cycles (the gather), which is expected here.
        { /usr/bin/time -f "peak RSS %M KB, wall %e s" "$bin" run --jobs 1 --threads "$t" --json "$out/$name.json" "$@" 2>&1 || [ $? -eq 3 ]; } \
            | grep -E 'cycles,|simulator:|peak RSS'
    done
}
run vecadd-1344x256 "$repo/bench/vecadd-1344x256.toml" \
    --listing "$repo/workloads/vecadd/vecadd_sm86.cuobjdump-sass.txt"
run sgemm-1024 "$repo/bench/sgemm-1024.toml" \
    --listing "$repo/workloads/sgemm/sgemm_sm86.cuobjdump-sass.txt"
if [ -d "$bfs" ]; then
    run bfs-trace --trace "$bfs"
else
    echo "== bfs-trace: $bfs not found, skipped"
fi
if [ -n "$gather" ]; then
    run gather-40k --trace "$gather" --max-cycles 40000
fi
if [ -n "$compute" ]; then
    run compute-waves --trace "$compute"
fi
echo "JSON statistics in $out"
