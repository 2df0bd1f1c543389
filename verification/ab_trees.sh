#!/usr/bin/env bash
# A/B of this tree against another on one GPU: builds both (the other from a source tarball, e.g.
# `git archive OLD -o old.tgz`), then runs each bench command with the old and the new binary in turn,
# ROUNDS times (default 2), so every pair of figures comes from the same card in the same call.
# Logs and JSON reports under $OUT/ab (new_<i>_<round>.txt, old_<i>_<round>.txt).
#   usage: OLD=old.tgz verification/ab_trees.sh "bench bsrmv --bs 8" ["bench batched ..."]...
set -uo pipefail
OUT=${OUT:-/tmp/out}; A=$OUT/ab; mkdir -p "$A"
OLD=${OLD:?a source tarball of the other tree}
NEWB=${B:-/tmp/blockres-build}; OLDB=/tmp/blockres-old-build; OLDS=/tmp/blockres-old-src
ROUNDS=${ROUNDS:-2}
carry=$PWD/.gpu-carry
flags=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DBLOCKRES_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DBLOCKRES_BUILD_TESTS=OFF
       -DTOMLPP_INCLUDE_DIR="$carry/include" -DCLI11_INCLUDE_DIR="$carry/include"
       -DNLOHMANN_JSON_INCLUDE_DIR="$carry/include")
if [[ ! -x $NEWB/miniapp/blockres ]]; then
  cmake -S . -B "$NEWB" "${flags[@]}" > "$A/new_configure.log" 2>&1 && cmake --build "$NEWB" -j 16 --target blockres \
    > "$A/new_build.log" 2>&1 || { echo "new tree: build failed"; tail -20 "$A/new_build.log"; exit 1; }
fi
rm -rf "$OLDS"; mkdir -p "$OLDS"; tar xzf "$OLD" -C "$OLDS"
cmake -S "$OLDS" -B "$OLDB" "${flags[@]}" > "$A/old_configure.log" 2>&1 && cmake --build "$OLDB" -j 16 --target blockres \
  > "$A/old_build.log" 2>&1 || { echo "old tree: build failed"; tail -20 "$A/old_build.log"; exit 1; }
i=0
for cmd in "$@"; do
  i=$((i + 1))
  for r in $(seq "$ROUNDS"); do
    for side in old new; do
      X=$NEWB/miniapp/blockres; [[ $side == old ]] && X=$OLDB/miniapp/blockres
      # shellcheck disable=SC2086
      $X $cmd --json "$A/${side}_${i}_${r}.json" > "$A/${side}_${i}_${r}.txt" 2>&1
      echo "== [$i] $side round $r rc $?: $cmd"
    done
  done
done
