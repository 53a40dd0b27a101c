#!/usr/bin/env bash
# The LTRF studies of issue 14 (docs/ltrf.md), one command each; all of them without an argument.
#   scripts/ltrf-studies.sh ipc          # Figure 14: 8x larger, 6.3x slower main RF (speed-ups)
#   scripts/ltrf-studies.sh latency      # Figure 15: tolerable main-RF latency per design
#   scripts/ltrf-studies.sh conflicts    # Figure 16: conflict-free prefetches, 8/16/32 registers
#   scripts/ltrf-studies.sh sensitivity  # Figures 17-18: registers per interval, active warps
#   scripts/ltrf-studies.sh lengths      # Table 4: real and optimal interval lengths, 8/16/32
# Results go to ltrf-results.db (SASSIM_DB to change it); runs already in it are not repeated.
# Plots (SVG) go to the current directory (SVG_DIR to change it; docs/ltrf/ holds the committed ones).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
SASSIM=target/release/sassim
DB="${SASSIM_DB:-ltrf-results.db}"
DB="$(realpath -m "$DB")"
study() {
    case "$1" in
        ipc)
            (cd experiments && "../$SASSIM" sweep ltrf-ipc.toml --db "$DB" >/dev/null)
            "$SASSIM" results compare ltrf-ipc --db "$DB" --svg "${SVG_DIR:-.}/ipc.svg" --force
            echo
            "$SASSIM" results compare ltrf-ipc --db "$DB" --base ideal-1x --svg "${SVG_DIR:-.}/ipc-vs-ideal.svg" --force ;;
        latency)
            (cd experiments && "../$SASSIM" sweep ltrf-latency.toml --db "$DB" >/dev/null)
            python3 scripts/ltrf-studies.py tolerable "$DB" "${SVG_DIR:-.}/latency.svg" ;;
        conflicts)
            python3 scripts/ltrf-studies.py conflicts ;;
        sensitivity)
            (cd experiments && "../$SASSIM" sweep ltrf-ipc.toml --db "$DB" >/dev/null)
            (cd experiments && "../$SASSIM" sweep ltrf-sensitivity.toml --db "$DB" >/dev/null)
            python3 scripts/ltrf-studies.py sensitivity "$DB" ;;
        lengths)
            for n in 8 16 32; do "$SASSIM" ltrf lengths --registers "$n"; echo; done ;;
        *) echo "unknown study $1 (ipc, latency, conflicts, sensitivity, lengths)" >&2; exit 2 ;;
    esac
}
if [ $# -eq 0 ]; then
    for s in ipc latency conflicts sensitivity lengths; do echo "## $s"; study "$s"; echo; done
else
    study "$1"
fi
