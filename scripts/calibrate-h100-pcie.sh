#!/usr/bin/env bash
# Reproduces docs/validation.md, "Kernel launch on the H100 PCIe": every configuration of
# fixtures/hardware/h100-pcie/simtune.csv (real Nsight Systems kernel durations) runs through
# sassim on the h100-pcie preset, with the calibration kernels of workloads/calibration/, and
# `sassim correlate` compares the simulated kernel durations with the measured ones.
#
# Usage: scripts/calibrate-h100-pcie.sh [OUTDIR]      (default: target/calibration/h100-pcie)
#   JOBS=N   simulations run in parallel (default: all cores)
#   SETS="--set launch.cta_dispatch_cycles=0.9 ..."   extra sassim options for every run
# Writes OUTDIR/runs/NNNN-<kernel>.json (one per CSV row, in file order), OUTDIR/<kernel>.txt
# and all.txt (the `sassim correlate` reports), OUTDIR/table.md (measured vs simulated per
# configuration) and OUTDIR/h100-pcie-launch.svg (the error plot). Needs only a Rust
# toolchain; takes about 10-20 minutes of CPU time.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${1:-$ROOT/target/calibration/h100-pcie}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
CSV=$ROOT/fixtures/hardware/h100-pcie/simtune.csv
SETS=${SETS:-}

(cd "$ROOT" && cargo build --release --quiet -p sassim)
BIN=$ROOT/target/release/sassim

rm -rf "$OUT/runs"
mkdir -p "$OUT/runs"
# One line per measured configuration, in file order: index kernel threads_per_block blocks.
tail -n +2 "$CSV" | tr -d '\r' | awk -F, 'NF >= 3 { printf "%04d %s %s %s\n", NR, $1, $2, $3 }' > "$OUT/rows.txt"

export BIN ROOT OUT SETS
run_row() {
  # shellcheck disable=SC2086
  "$BIN" run "$ROOT/workloads/calibration/$2/$2.toml" --gpu h100-pcie --grid "$4" --block "$3" \
    --jobs 1 --json "$OUT/runs/$1-$2.json" --force $SETS > /dev/null 2> "$OUT/runs/$1-$2.log" \
    || { echo "row $1 ($2, $3 threads, $4 blocks) failed:" >&2; cat "$OUT/runs/$1-$2.log" >&2; exit 1; }
}
export -f run_row
xargs -P "$JOBS" -L 1 bash -c 'run_row "$@"' _ < "$OUT/rows.txt"

for k in emptykernel ffmakernel; do
  "$BIN" correlate "$OUT"/runs/*-"$k".json "$CSV" > "$OUT/$k.txt"
done
"$BIN" correlate "$OUT"/runs/*.json "$CSV" --plot "$OUT/h100-pcie-launch.svg" --force > "$OUT/all.txt"

# Measured vs simulated per configuration (uid i of all.txt = row i of rows.txt).
awk 'NR == FNR { kernel[NR] = $2; tpb[NR] = $3; blocks[NR] = $4; next }
     $1 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ {
       i = $1 + 0
       printf "| %s | %d | %d | %.0f | %d | %+.1f |\n", kernel[i], tpb[i], blocks[i], $4, $3, ($3 - $4) / $4 * 100
     }' "$OUT/rows.txt" "$OUT/all.txt" | sort -t'|' -k2,2 -k3,3n -k4,4n > "$OUT/table.body"
{
  echo "| kernel | threads/block | blocks | measured cycles | simulated cycles | error % |"
  echo "|---|---:|---:|---:|---:|---:|"
  cat "$OUT/table.body"
} > "$OUT/table.md"
rm -f "$OUT/table.body"

grep -h "MAPE" "$OUT/emptykernel.txt" | sed 's/^/emptykernel: /'
grep -h "MAPE" "$OUT/ffmakernel.txt" | sed 's/^/ffmakernel:  /'
echo "reports: $OUT/{emptykernel,ffmakernel,all}.txt, table: $OUT/table.md, plot: $OUT/h100-pcie-launch.svg"
