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

if [[ ! -x "$VENV/bin/python" ]]; then
  python3 -m venv "$VENV"
fi
cuda_env_missing=()
for w in "${CUDA_WHEELS[@]}"; do
  "$VENV/bin/pip" show "$w" 2>/dev/null | grep -q "^Version: $VERSION\$" || cuda_env_missing+=("$w==$VERSION")
done
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
