#!/usr/bin/env bash
# Builds the CUDA program suite (workloads/programs/) with the pinned toolchain and writes the
# committed outputs, so that sassim's tests need no CUDA toolkit:
#
#   workloads/programs/bin/<name>                     executables: nvcc -O3 -cudart shared with
#                                                     cubins for sm_75, sm_86 and sm_90 in one fat binary
#                                                     (except wgmma_gemm: sm_90a only, see below)
#   workloads/programs/bin/refuse_<name>              the refusal tests (refuse/<name>/, own flags)
#   workloads/programs/bin/fault_<name>               kernels that fault on purpose (faults/<name>/)
#   workloads/programs/sass/<sha256>.nvdisasm-hex nvdisasm -hex of every cubin in every fat
#                                                     binary, named by the SHA-256 of the cubin file
#                                                     (as extracted by cuobjdump -xelf all)
#                                                     (suffix without .txt on purpose: the test
#                                                     crates/inputs/sass/tests/listings.rs parses every
#                                                     *.nvdisasm-hex.txt under workloads/, and today's
#                                                     parser rejects some of this syntax and the
#                                                     kernel-less device-link stubs: OPCODES.md)
#   workloads/programs/sass/INDEX.txt                 program, arch, cubin SHA-256, kernels
#   workloads/programs/TOOLCHAIN.txt                  tool versions and the exact commands
#
# Needs Python 3, a host C++ compiler (gcc <= 14) and binutils (objcopy, readelf); installs
# NVIDIA's CUDA 13.5.37 toolchain from PyPI into .venv-cuda/ on first use (scripts/cuda-env.sh).
#
# Reproducible: a second run with nothing changed rewrites every output byte for byte.
#  - nvcc is run from the repository root as .venv-cuda/cuda/bin/nvcc with relative -I/-L paths:
#    nvcc's device-link step records its own path and the -L directories in each device-link
#    cubin (.note.nv.tkinfo), so absolute paths would make the outputs depend on the checkout.
#  - nvcc names its host intermediate /tmp/tmpxft_<pid>_...cudafe1.cpp and the host compiler
#    keeps that name as the executable's STT_FILE symbol; it is renamed to <name>.cudafe1.cpp
#    with objcopy (the only byte that changes from one run to the next otherwise).
#
# Usage: scripts/build-programs.sh            (always builds the whole suite; JOBS=N for parallel builds)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cuda-env.sh"
cd "$ROOT"

P=workloads/programs
JOBS=${JOBS:-2}
if [[ "$VENV" == "$ROOT/.venv-cuda" ]]; then REL_VENV=.venv-cuda; else REL_VENV=$VENV; fi
NVCC="$REL_VENV/cuda/bin/nvcc"
LINKDIR="$REL_VENV/link" # libcudart.so -> the wheel's libcudart.so.13 (nvcc -cudart shared links -lcudart)
COMMON=(-O3 -I"$P/common" -Xlinker --build-id=none)
SUITE_FLAGS=(-cudart shared -L"$LINKDIR"
  -gencode arch=compute_75,code=sm_75 -gencode arch=compute_86,code=sm_86 -gencode arch=compute_90,code=sm_90)

# name | source | flags (besides COMMON)
declare -A SRC FLAGS
PROGRAMS=()
for d in "$P"/*/; do
  n=$(basename "$d")
  [[ -f "$d/$n.cu" ]] || continue
  PROGRAMS+=("$n")
  SRC[$n]="$d$n.cu"
  FLAGS[$n]="${SUITE_FLAGS[*]}"
done
# wgmma_gemm: wgmma.mma_async (and its TMA/cluster code) needs the arch-specific target sm_90a;
# its fat binary holds only an sm_90a cubin (no sm_75/86/90 cubins, no PTX).
WGMMA_FLAGS="-cudart shared -L$LINKDIR -gencode arch=compute_90a,code=sm_90a"
FLAGS[wgmma_gemm]=$WGMMA_FLAGS
# tma_copy: cp.async.bulk and the TMA store exist from sm_90 on; its fat binary holds only an
# sm_90 cubin.
TMA_COPY_FLAGS="-cudart shared -L$LINKDIR -gencode arch=compute_90,code=sm_90"
FLAGS[tma_copy]=$TMA_COPY_FLAGS
SRC[refuse_static_rt]=$P/refuse/static_rt/static_rt.cu # nvcc's default: -cudart static
FLAGS[refuse_static_rt]="-gencode arch=compute_75,code=sm_75 -gencode arch=compute_86,code=sm_86 -gencode arch=compute_90,code=sm_90"
SRC[refuse_ptxonly]=$P/refuse/ptxonly/ptxonly.cu
FLAGS[refuse_ptxonly]="-cudart shared -L$LINKDIR -gencode arch=compute_86,code=compute_86"
for r in unimpl opcode; do
  SRC[refuse_$r]=$P/refuse/$r/$r.cu
  FLAGS[refuse_$r]="${SUITE_FLAGS[*]}"
done
# Programs whose kernels fault on purpose (faults/<name>/): the runtime's error reporting.
for f in assert oob; do
  SRC[fault_$f]=$P/faults/$f/$f.cu
  FLAGS[fault_$f]="${SUITE_FLAGS[*]}"
done
ALL=("${PROGRAMS[@]}" refuse_static_rt refuse_ptxonly refuse_unimpl refuse_opcode fault_assert fault_oob)

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$P/bin" "$P/sass"

build() { # name: compile into $TMP/bin/name, normalise the host intermediate's file symbol
  local n=$1 out=$TMP/bin/$1
  mkdir -p "$TMP/bin" "$TMP/tmp-$n"
  # shellcheck disable=SC2086  # FLAGS holds words
  TMPDIR="$TMP/tmp-$n" "$NVCC" "${COMMON[@]}" ${FLAGS[$n]} "${SRC[$n]}" -o "$out"
  local sym
  for sym in $(readelf -sW "$out" | awk '$4 == "FILE" && $8 ~ /^tmpxft_/ {print $8}'); do
    objcopy --redefine-sym "$sym=${sym#tmpxft_*-[0-9]*_}" "$out"
  done
  if readelf -sW "$out" | grep -q tmpxft_; then echo "build-programs: $n: tmpxft symbol left" >&2; return 1; fi
}

pids=()
for n in "${ALL[@]}"; do
  while [[ $(jobs -rp | wc -l) -ge $JOBS ]]; do wait -n || true; done # failures are caught below
  build "$n" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { echo "build-programs: a build failed" >&2; exit 1; }; done
for n in "${ALL[@]}"; do
  [[ -x "$TMP/bin/$n" ]] || { echo "build-programs: $n was not built" >&2; exit 1; }
done

# Outputs: replace bin/ and sass/ wholesale so that nothing stale remains.
rm -f "$P"/bin/* "$P"/sass/*
index=$TMP/INDEX.txt
{
  echo "# Cubins in the fat binaries of workloads/programs/bin/* (scripts/build-programs.sh)."
  echo "# program  arch  sha256-of-cubin  kernels (mangled names; '-' = none: nvcc's device-link stub)"
  echo "# The listing of each cubin is sass/<sha256>.nvdisasm-hex. 'ptx' lines: PTX only, no cubin."
} > "$index"
for n in "${ALL[@]}"; do
  cp "$TMP/bin/$n" "$P/bin/$n"
  x=$TMP/x-$n
  mkdir -p "$x"
  (cd "$x" && cuobjdump -xelf all "$ROOT/$P/bin/$n" > /dev/null 2>&1 || true)
  for c in $(cd "$x" && ls -1 *.cubin 2>/dev/null | sort -t. -k2,2n); do
    arch=$(echo "$c" | sed -n 's/.*\.\(sm_[0-9a-z]*\)\.cubin$/\1/p')
    sha=$(sha256sum "$x/$c" | cut -d' ' -f1)
    nvdisasm -hex "$x/$c" > "$P/sass/$sha.nvdisasm-hex"
    kernels=$(readelf -SW "$x/$c" 2>/dev/null | sed -n 's/.* \.text\.\([^ ]*\) .*/\1/p' | sort | paste -sd, -)
    echo "$n $arch $sha ${kernels:--}" >> "$TMP/index-body"
  done
  for ptx in $(cuobjdump -lptx "$P/bin/$n" 2>/dev/null | sed -n 's/^PTX file *[0-9]*: *//p'); do
    arch=$(echo "$ptx" | sed -n 's/.*\.\(sm_[0-9a-z]*\)\.ptx$/\1/p')
    echo "$n ${arch/sm_/compute_} ptx -" >> "$TMP/index-body"
  done
done
sort -k1,1 -k2,2 -k3,3 "$TMP/index-body" | awk '{printf "%-18s %-10s %s %s\n", $1, $2, $3, $4}' >> "$index"
cp "$index" "$P/sass/INDEX.txt"

{
  echo "# Toolchain that built workloads/programs/bin/* and sass/* (scripts/build-programs.sh)."
  echo "# PyPI: ${CUDA_WHEELS[*]/%/==$VERSION}"
  echo "# Suite:        nvcc ${COMMON[*]} ${SUITE_FLAGS[*]} <name>/<name>.cu -o bin/<name>"
  echo "# static_rt:    nvcc ${COMMON[*]} ${FLAGS[refuse_static_rt]} (nvcc's default static runtime)"
  echo "# ptxonly:      nvcc ${COMMON[*]} ${FLAGS[refuse_ptxonly]}"
  echo "# wgmma_gemm:   nvcc ${COMMON[*]} $WGMMA_FLAGS"
  echo "# tma_copy:     nvcc ${COMMON[*]} $TMA_COPY_FLAGS"
  echo "# then: objcopy --redefine-sym tmpxft_<pid>_..._<name>.cudafe1.cpp=<name>.cudafe1.cpp (STT_FILE symbol)"
  echo "# SASS: cuobjdump -xelf all bin/<name>; nvdisasm -hex <cubin> > sass/<sha256 of cubin>.nvdisasm-hex"
  echo "## nvcc --version"; "$NVCC" --version
  echo "## ptxas --version"; ptxas --version
  echo "## nvdisasm --version"; nvdisasm --version
  echo "## cuobjdump --version"; cuobjdump --version
  echo "## host compiler (g++ --version | head -1)"; g++ --version | head -1
  echo "## objcopy --version | head -1"; objcopy --version | head -1
} > "$P/TOOLCHAIN.txt"

echo "built ${#ALL[@]} programs into $P/bin; $(ls "$P/sass" | grep -c nvdisasm) cubin listings in $P/sass"
