#!/usr/bin/env bash
# Regenerates the committed SASS listings of the built-in workload suite (workloads/<name>/).
#
# Needs only Python 3 and a C++ host compiler (gcc <= 14) for nvcc's front end. Installs NVIDIA's
# CUDA 13.5.37 toolchain from PyPI into .venv-cuda/ (gitignored) on first use (scripts/cuda-env.sh).
# Nothing in the simulator's build, tests or runs needs this toolchain: the outputs are committed.
#
# For each workloads/<name>/<name>.cu and each arch in $ARCHS (default: 75 86 90) it writes
#   workloads/<name>/<name>_smXX.cuobjdump-sass.txt   (cuobjdump -sass: both 64-bit words per instruction)
#   workloads/<name>/<name>_smXX.nvdisasm-hex.txt     (nvdisasm -hex: ELF sections, labels, hex words)
#   workloads/<name>/<name>.ptxas-v.txt               (ptxas -v: registers, shared memory, per arch)
# and workloads/TOOLCHAIN.txt (tool versions).
#
# Usage: scripts/gen-workloads.sh [name ...]     (default: every workload)
# A name may be a path below workloads/, e.g. `ARCHS=90 scripts/gen-workloads.sh
# calibration/emptykernel calibration/ffmakernel` (the H100 calibration kernels, sm_90 only);
# TOOLCHAIN.txt is then left as it is.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cuda-env.sh"
cd "$ROOT"
ARCHS=${ARCHS:-"75 86 90"}


TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

if [[ $# -gt 0 ]]; then NAMES=("$@"); else
  NAMES=(); for d in workloads/*/; do n=$(basename "$d"); [[ -f "$d/$n.cu" ]] && NAMES+=("$n"); done
fi

# TOOLCHAIN.txt describes the suite's listings; kernels below subfolders (calibration/...)
# are generated for their own ARCHS and leave it alone.
suite=0
for n in "${NAMES[@]}"; do [[ $n == */* ]] || suite=1; done
if [[ $suite == 1 ]]; then
{
  echo "# Toolchain that produced the committed listings (scripts/gen-workloads.sh)."
  echo "# PyPI: nvidia-cuda-nvcc==$VERSION nvidia-cuda-nvdisasm==$VERSION nvidia-cuda-cuobjdump==$VERSION"
  echo "# Compile: nvcc -cubin -O3 -arch=sm_XX <name>.cu ; archs: $ARCHS"
  echo "## ptxas --version"; ptxas --version
  echo "## nvcc --version"; nvcc --version
  echo "## nvdisasm --version"; nvdisasm --version
  echo "## cuobjdump --version"; cuobjdump --version
} > workloads/TOOLCHAIN.txt
fi

for n in "${NAMES[@]}"; do
  dir=workloads/$n
  b=$(basename "$n")
  : > "$dir/$b.ptxas-v.txt"
  for sm in $ARCHS; do
    cubin=$TMP/${b}_sm$sm.cubin
    # -Xptxas -v prints resource usage; the cubin is identical with or without it.
    nvcc -cubin -O3 -arch=sm_$sm -Xptxas -v "$dir/$b.cu" -o "$cubin" 2>&1 \
      | sed "s#$TMP/##" | grep -v "Compile time" >> "$dir/$b.ptxas-v.txt"
    cuobjdump -sass "$cubin" | sed "s#$TMP/##" > "$dir/${b}_sm$sm.cuobjdump-sass.txt"
    nvdisasm -hex "$cubin" > "$dir/${b}_sm$sm.nvdisasm-hex.txt"
  done
  echo "generated $dir"
done
