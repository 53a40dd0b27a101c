#!/usr/bin/env bash
# Profile-guided build of the `sassim` binary (docs/performance-log.md, "A profile-guided build").
#
# The compiler lays out and inlines the simulator's code by where a run's time goes: the
# binary is first built with instrumentation, runs a training set of committed inputs (the
# built-in suite on two GPUs, the loaded vector add, the start of the tiled SGEMM, the BFS
# trace of fixtures/, the start of a generated memory-bound gather trace), and is then built
# again with the profile. Results are bit-identical to a plain `cargo build --release` (the
# profile changes code layout and inlining, never what is computed); the loaded vector add
# runs 2-10 % faster on the development machine (docs/performance.md, docs/performance-log.md).
#
# Needs LLVM's profile merger of the Rust toolchain: `rustup component add llvm-tools`
# (a setup step; this script runs it when the tool is missing). Python 3 generates the
# gather trace. Takes two release builds and about a minute of training.
#
# Usage: scripts/build-pgo.sh   ->  target/pgo/release/sassim
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

sysroot=$(rustc --print sysroot)
host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$sysroot/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
    echo "build-pgo: installing llvm-tools (LLVM's profile merger) for $(rustc --version)" >&2
    rustup component add llvm-tools
fi
if [ ! -x "$profdata" ]; then
    echo "build-pgo: $profdata not found after 'rustup component add llvm-tools'" >&2
    exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "build-pgo: instrumented build (target/pgo-gen)" >&2
RUSTFLAGS="-Cprofile-generate=$work/raw" \
    cargo build --release -p sassim --target-dir "$repo/target/pgo-gen"
bin="$repo/target/pgo-gen/release/sassim"

# A training run may stop at its cycle limit (exit 3); anything else is an error.
train() {
    local rc=0
    "$bin" "$@" >/dev/null 2>"$work/train.err" || rc=$?
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
        echo "build-pgo: training run failed (exit $rc): sassim $*" >&2
        cat "$work/train.err" >&2
        exit 2
    fi
}
echo "build-pgo: training" >&2
train run --jobs 1 --threads 1
train run --jobs 1 --threads 2 --gpu h100
train run --jobs 1 --threads 1 bench/vecadd-1344x256.toml \
    --listing workloads/vecadd/vecadd_sm86.cuobjdump-sass.txt
train run --jobs 1 --threads 2 bench/vecadd-1344x256.toml \
    --listing workloads/vecadd/vecadd_sm86.cuobjdump-sass.txt
train run --jobs 1 --threads 1 bench/sgemm-1024.toml \
    --listing workloads/sgemm/sgemm_sm86.cuobjdump-sass.txt --max-cycles 8000
train run --jobs 1 --threads 2 --trace fixtures/traces/bfs-sm80-v3
python3 scripts/gen-gather-trace.py "$work/gather" 1 >/dev/null
train run --jobs 1 --threads 1 --trace "$work/gather" --max-cycles 10000

"$profdata" merge -o "$work/sassim.profdata" "$work/raw"
echo "build-pgo: optimised build (target/pgo)" >&2
RUSTFLAGS="-Cprofile-use=$work/sassim.profdata" \
    cargo build --release -p sassim --target-dir "$repo/target/pgo"
echo "build-pgo: built $repo/target/pgo/release/sassim" >&2
