#!/usr/bin/env bash
# Installs NVIDIA's pinned CUDA 13.5.37 tools (nvcc, ptxas, nvdisasm, cuobjdump, the runtime
# headers) from PyPI into <repo>/.venv-cuda, where `sassim exec` finds nvdisasm to disassemble the
# cubins of programs whose SASS is not cached yet (docs/exec.md). Needs Python 3 and network
# access to PyPI; nothing else of sassim needs these tools.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cuda-env.sh"
echo "nvdisasm: $(command -v nvdisasm)"
echo "nvcc:     $(command -v nvcc)"
