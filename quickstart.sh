#!/usr/bin/env bash
# blockres quick start for a fresh Debian 12 machine:
#   ./quickstart.sh run    install what is missing, build blockres, run the default deck
#   ./quickstart.sh test   install what is missing, build everything, run the whole test suite
# The CUDA backend is built when nvcc is found (/usr/local/cuda); without it, CPU only. Its GPU code
# is compiled for the GPU present, else for sm_80, 86, 89 and 90 (+ PTX for newer GPUs); CUDAARCHS=90
# in the environment compiles one architecture instead (README, "Building by hand").
# `run` builds only the blockres executable (and the libraries it links), `test` everything.
set -euo pipefail
cd "$(dirname "$0")"

# python3-*: `blockres plot` (matplotlib, Agg) and its tests; python3-jsonschema: the bench suite's report test.
# libopenmpi-dev (with openmpi-bin): the distributed layer and its tests on 1, 2 and 3 ranks (issue 33).
packages=(build-essential cmake ninja-build pkg-config libhdf5-dev libtomlplusplus-dev libfmt-dev
          libcli11-dev nlohmann-json3-dev libgtest-dev libvtk9-dev libhypre-dev libopenmpi-dev
          python3-matplotlib python3-numpy python3-h5py python3-jsonschema)
build_dir=${BLOCKRES_BUILD_DIR:-build/release}

install_missing() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "quickstart: installing ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

build() {  # $1: the build target (blockres, or all: the tests too)
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
  cmake --build "$build_dir" -j "$(nproc)" --target "$1"
}

case "${1:-}" in
  run)
    install_missing
    build blockres
    "$build_dir/miniapp/blockres" run inputs/quarter_five_spot.toml --output output
    ;;
  test)
    install_missing
    build all
    ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)"
    ;;
  *)
    echo "usage: $0 run|test" >&2
    exit 2
    ;;
esac
