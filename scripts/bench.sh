#!/usr/bin/env bash
# Loaded-GPU benchmark set (issue 15; method in docs/performance.md). Runs each benchmark with
# `sassim run --jobs 1` and prints the simulator's own speed line plus peak RSS (GNU time).
# Usage: scripts/bench.sh [SASSIM_BINARY] [BFS_TRACE_DIR]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$repo/target/release/sassim}
bfs=${2:-/work/shared/traces/bfs-sm80-v3}
out=$(mktemp -d)
run() {
    local name=$1; shift
    echo "== $name"
    /usr/bin/time -f "peak RSS %M KB, wall %e s" "$bin" run --jobs 1 --json "$out/$name.json" "$@" 2>&1 \
        | grep -E 'cycles,|simulator:|peak RSS'
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
echo "JSON statistics in $out"
