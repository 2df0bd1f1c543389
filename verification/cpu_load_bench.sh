#!/usr/bin/env bash
# Issue 20: the CPU backend when other work shares the cores. Runs the default deck on the CPU
# backend (no VTK) on an idle machine, then two copies side by side, then one copy beside one
# busy-loop process per core, TRIES times, and prints each wall time over the idle one of the same
# try. Every ratio should be at most 3 (and the idle time no worse than before the change).
#   usage: verification/cpu_load_bench.sh [BLOCKRES] [-- extra run arguments, e.g. --threads 1]
#   env:   TRIES (3), DECK (inputs/quarter_five_spot.toml)
# Run it on an otherwise idle machine: it measures the load it makes itself.
set -uo pipefail
cd "$(dirname "$0")/.."
X=${1:-build/release/miniapp/blockres}
shift || true
[[ ${1:-} == -- ]] && shift
EXTRA=("$@")
DECK=${DECK:-inputs/quarter_five_spot.toml}
TRIES=${TRIES:-3}
CORES=$(nproc)
OUT=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$OUT"' EXIT
[[ -x $X ]] || { echo "no blockres binary at $X (build first, or pass its path)" >&2; exit 1; }

# One run; its wall time in seconds on stdout. Fails loudly: a run that fails has no time.
run_one() {  # tag
  local t0 t1
  t0=$(date +%s.%N)
  if ! "$X" run "$DECK" --backend cpu --output "$OUT/$1" --set output.vtk=false "${EXTRA[@]}" > "$OUT/$1.log" 2>&1; then
    echo "run $1 failed:" >&2; tail -5 "$OUT/$1.log" >&2; exit 1
  fi
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}

echo "deck $DECK, $CORES cores, $("$X" --version 2>&1 | head -1), extra: ${EXTRA[*]:-none}"
worst=0
printf "%-4s %8s %12s %12s %12s %8s %8s %8s\n" try idle_s side_a_s side_b_s busy_s side_a/i side_b/i busy/i
for try in $(seq 1 "$TRIES"); do
  idle=$(run_one idle_$try)
  # Two copies side by side.
  run_one a_$try > "$OUT/a.t" & pa=$!
  run_one b_$try > "$OUT/b.t" & pb=$!
  wait $pa $pb
  a=$(cat "$OUT/a.t"); b=$(cat "$OUT/b.t")
  # One copy beside one busy loop per core.
  busy_pids=()
  for c in $(seq 1 "$CORES"); do (while :; do :; done) & busy_pids+=($!); done
  busy=$(run_one busy_$try)
  kill "${busy_pids[@]}" 2>/dev/null; wait "${busy_pids[@]}" 2>/dev/null
  div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
  ra=$(div "$a" "$idle"); rb=$(div "$b" "$idle"); rbusy=$(div "$busy" "$idle")
  printf "%-4s %8.2f %12.2f %12.2f %12.2f %8.2f %8.2f %8.2f\n" "$try" "$idle" "$a" "$b" "$busy" "$ra" "$rb" "$rbusy"
  worst=$(awk -v w="$worst" -v x="$ra" -v y="$rb" -v z="$rbusy" 'BEGIN { m = w; if (x > m) m = x; if (y > m) m = y; if (z > m) m = z; print m }')
done
grep -m1 "^threads:" "$OUT/idle_1.log"
awk -v w="$worst" 'BEGIN { printf "worst ratio %.2f: %s\n", w, (w <= 3 ? "PASS (<= 3)" : "FAIL (> 3)") }'
awk -v w="$worst" 'BEGIN { exit (w <= 3 ? 0 : 1) }'
