#!/usr/bin/env bash
# Runs the four shipped MICRO'25 section 7 studies (experiments/*.toml) into one results database and
# writes their comparison tables (Markdown, printed) and plots (docs/experiments/*.svg), as used in
# docs/experiments.md. A rerun only simulates what changed (same simulator binary: nothing).
#
# Usage: scripts/run-studies.sh [DB]     (default: target/studies.db)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
DB=${1:-target/studies.db}
cargo build --release --quiet
SASSIM=target/release/sassim
mkdir -p docs/experiments
for e in table5-prefetch table6-regfile table7-dependence issue-policy; do
  "$SASSIM" sweep "experiments/$e.toml" --db "$DB"
  echo "### $e"
  "$SASSIM" results compare "$e" --db "$DB" --markdown --svg "docs/experiments/$e.svg" --force
done
echo "### area"
"$SASSIM" results area
