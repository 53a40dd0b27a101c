# Sourced by scripts/gen-workloads.sh and scripts/build-programs.sh: installs NVIDIA's pinned CUDA
# 13.5.37 toolchain from PyPI into $VENV (default <repo>/.venv-cuda, gitignored) on first use and
# puts it on PATH.
#
# Sets: ROOT (repository root), VERSION, VENV, CU (the wheel's cu13 directory) and creates
#   $VENV/cuda -> $CU                     a fixed-name link to the toolkit directory
#   $VENV/link/libcudart.so -> libcudart.so.13 of the nvidia-cuda-runtime wheel
#                                         (nvcc -cudart shared links -lcudart; the wheel ships only
#                                         the versioned name)
# Needs only Python 3 and a C++ host compiler (gcc <= 14) for nvcc's front end.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VERSION=13.5.37
VENV=${VENV:-$ROOT/.venv-cuda}
CUDA_WHEELS=(nvidia-cuda-nvcc nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump nvidia-cuda-runtime)
# CCCL headers (<nv/target>, <cuda/...>) that cuda_fp16.h / mma.h include. PyPI has no CCCL wheel
# numbered 13.5.37: 13.3.5.0.6 (CCCL 3.5.0 for CUDA 13) is the newest there and compiles the
# suite's tensor-core programs with nvcc 13.5.37. Pinned by its own version.
CCCL_WHEEL=nvidia-cuda-cccl
CCCL_VERSION=13.3.5.0.6

if [[ ! -x "$VENV/bin/python" ]]; then
  python3 -m venv "$VENV"
fi
cuda_env_missing=()
for w in "${CUDA_WHEELS[@]}"; do
  "$VENV/bin/pip" show "$w" 2>/dev/null | grep -q "^Version: $VERSION\$" || cuda_env_missing+=("$w==$VERSION")
done
"$VENV/bin/pip" show "$CCCL_WHEEL" 2>/dev/null | grep -q "^Version: $CCCL_VERSION\$" || cuda_env_missing+=("$CCCL_WHEEL==$CCCL_VERSION")
if [[ ${#cuda_env_missing[@]} -gt 0 ]]; then
  "$VENV/bin/pip" install --quiet "${cuda_env_missing[@]}"
fi
unset cuda_env_missing
CU=$("$VENV/bin/python" -c 'import glob,sys; print(glob.glob(sys.prefix + "/lib/python3*/site-packages/nvidia/cu13")[0])')
export PATH="$CU/bin:$PATH"
ln -sfn "$CU" "$VENV/cuda"
mkdir -p "$VENV/link"
ln -sfn "$CU/lib/libcudart.so.13" "$VENV/link/libcudart.so"

ptxas --version | grep -q "V$VERSION" || { echo "ptxas is not V$VERSION" >&2; exit 1; }
