#!/usr/bin/env bash
# The include rule of ARCHITECTURE.md, checked: a file may include project headers only from its own
# folder's layer or the layers below it.
#   input  <  kernels  <  linalg  <  physics  <  miniapp/io  <  miniapp/run  <  miniapp/{verify,bench,plot}  <  miniapp/tune
#   <  miniapp/ (main)
# (input sits beside kernels at the bottom: neither includes the other; the preconditioners read
# their options with it, linalg's root uses only its name tables (input/names.hpp), physics both.)
# Inside linalg, the root (executor, arrays, BSR matrix, vector ops, Krylov) includes nothing of
# linalg/preconditioners/ but the interface, preconditioner.hpp. Tests (*/test/) may also include
# the layer they run on (a kernel's GPU test allocates through linalg's executor), and verification/
# sits on top. Usage: cmake/check_layers.sh [SOURCE_DIR]; exit 0 when the tree keeps the rule.
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

allowed() {  # allowed <file> -> the include prefixes it may use
  local f=$1 test=
  [[ $f == */test/* ]] && test=1
  case $f in
    input/*)           echo "input/" ;;
    kernels/*)         echo "kernels/ ${test:+linalg/}" ;;
    linalg/preconditioners/*) echo "input/ kernels/ linalg/ ${test:+physics/}" ;;
    linalg/*)          echo "input/names.hpp kernels/ linalg/bsr_matrix linalg/executor linalg/kernel_tuning linalg/array linalg/allocation linalg/vector_ops linalg/phase_timer linalg/stream_graph linalg/krylov linalg/preconditioners/preconditioner.hpp linalg/distributed/ ${test:+linalg/}" ;;
    physics/*)         echo "input/ kernels/ linalg/ physics/ ${test:+miniapp/io/}" ;;
    miniapp/io/*)      echo "input/ kernels/ linalg/ physics/ miniapp/io/ ${test:+miniapp/run/ verification/}" ;;
    miniapp/run/*)     echo "input/ kernels/ linalg/ physics/ miniapp/io/ miniapp/run/ ${test:+verification/}" ;;
    miniapp/verify/*)  echo "input/ kernels/ linalg/ physics/ miniapp/io/ miniapp/run/ miniapp/verify/" ;;
    miniapp/bench/*)   echo "input/ kernels/ linalg/ physics/ miniapp/io/ miniapp/run/ miniapp/bench/" ;;
    miniapp/tune/*)    echo "input/ kernels/ linalg/ physics/ miniapp/io/ miniapp/run/ miniapp/bench/ miniapp/tune/" ;;
    miniapp/plot/*)    echo "input/ kernels/ linalg/ physics/ miniapp/io/ miniapp/run/ miniapp/plot/" ;;
    miniapp/*)         echo "input/ kernels/ linalg/ physics/ miniapp/" ;;
    *)                 echo "*" ;;
  esac
}

bad=0
while IFS= read -r f; do
  prefixes=$(allowed "$f")
  [ "$prefixes" = "*" ] && continue
  while IFS= read -r line; do
    inc=${line#*\"}; inc=${inc%%\"*}
    [[ $inc == */* ]] || continue                       # system or relative header
    ok=
    for p in $prefixes; do [[ $inc == "$p"* ]] && ok=1 && break; done
    if [ -z "$ok" ]; then
      echo "$f: includes \"$inc\", above its layer (allowed: $prefixes)"
      bad=1
    fi
  done < <(grep -hE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" || true)
done < <(git ls-files 2>/dev/null | grep -E '\.(cpp|hpp|cu|cuh|h)$' || find . -name '*.[ch]pp' -o -name '*.cu' -o -name '*.cuh' | sed 's|^\./||')

if [ $bad -eq 0 ]; then echo "check_layers: every include keeps the layer rule"; fi
exit $bad
