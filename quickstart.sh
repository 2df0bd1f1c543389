#!/usr/bin/env bash
# blockres quick start for a fresh Debian 12 machine:
#   ./quickstart.sh run    install what is missing, build, run the default deck
#   ./quickstart.sh test   install what is missing, build, run the whole test suite
# The CUDA backend is built when nvcc is found (/usr/local/cuda); without it, CPU only.
set -euo pipefail
cd "$(dirname "$0")"

packages=(build-essential cmake ninja-build pkg-config libhdf5-dev libtomlplusplus-dev libfmt-dev
          libcli11-dev nlohmann-json3-dev libgtest-dev libvtk9-dev libhypre-dev)
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

build() {
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
  cmake --build "$build_dir" -j "$(nproc)"
}

case "${1:-}" in
  run)
    install_missing
    build
    "$build_dir/miniapp/blockres" run inputs/quarter_five_spot.toml --output output
    ;;
  test)
    install_missing
    build
    ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)"
    ;;
  *)
    echo "usage: $0 run|test" >&2
    exit 2
    ;;
esac
