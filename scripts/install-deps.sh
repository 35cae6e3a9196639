#!/usr/bin/env bash
# Installs what building and testing cc1d needs on a Debian host, when it is missing:
# a C++ toolchain, CMake, Ninja, fmt, nlohmann-json, doctest, xxhash, and Debian's ROCm
# packages that let HIPRTC compile AMD kernels without an AMD GPU. The CUDA toolkit
# (NVRTC) is not a Debian package here: it is used when present (/usr/local/cuda).
set -euo pipefail
packages=(g++ cmake ninja-build pkg-config python3-pip
          libfmt-dev nlohmann-json3-dev doctest-dev libxxhash-dev
          libamdhip64-dev libamd-comgr2 rocm-device-libs libhiprtc-builtins5)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "missing packages: ${missing[*]} (run as root, or install them)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
