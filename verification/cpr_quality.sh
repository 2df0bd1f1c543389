#!/usr/bin/env bash
# CPR configurations of issue 29 (item 3) on the quarter five-spot decks and the multicomponent decks: one
# `blockres run` per configuration, deck and linear tolerance, one table row each (Newton and linear
# iterations, preconditioner applications per Newton iteration, time per Newton iteration).
# Usage: verification/cpr_quality.sh BINARY BACKEND [DECKSET] [CONFIG...]
#   BINARY   the blockres executable; BACKEND cpu or cuda
#   DECKSET  qfs (default: quarter_five_spot, quarter_five_spot_60x60x20), mc (multicomponent_3, _8 and
#            _16 cut to 10x10x5 with the producer moved to (10, 10)), or all
#   CONFIG   names below (default: every one). Environment: TOLS (default "5e-3 1e-4"), THREADS (CPU,
#            default 2), END_TIME (a shorter schedule: schedule.end_time), OUT (default /tmp/cpr_quality).
# Every deck's [solver.linear] section is replaced by FGMRES with type = "cpr" (the "default" row: the keys it
# leaves out take the default solver's values, linalg/preconditioners/default_solver.cpp); a configuration adds
# its --set keys, each pinning what it changes (the "deck" row runs the deck as shipped; "old_default" is the
# CPR default before issue 29: quasi-IMPES weights, block-Jacobi second stage; "prev_default" the default
# linear solver issue 29 introduced first: true-IMPES, AMG V-cycle, block ILU(0)/ISAI(1) with exact factors).
# Names: ti_ = true-IMPES; bilu0 = exact block ILU(0) and triangular solves; bisai[2]_sK = block ILU(0), 1 factor
# sweep, ISAI(1) [ISAI(2)] + K sweeps per factor (ti_bisai_s3_w is the default for bs <= 8 and <= 160k unknowns
# since issue 29); silu3 = scalar ILU(0), ISAI(1) + 3 sweeps; _w = AMG W-cycle; _amg_ilu0[s2] = AMG smoothed by
# ILU(0) (exact, or 2 Jacobi sweeps per triangular factor); bj = block-Jacobi.
# Time per Newton iteration: linear = (preconditioner setup + linear solve) / Newton iterations, total = the
# run's wall time / Newton iterations (assembly included); both from the run log's closing lines.
set -uo pipefail
bin=${1:?usage: cpr_quality.sh BINARY BACKEND [qfs|mc|all] [CONFIG...]}
backend=${2:?usage: cpr_quality.sh BINARY BACKEND [qfs|mc|all] [CONFIG...]}
deckset=${3:-qfs}
shift $(($# < 3 ? $# : 3))
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp/cpr_quality}
tols=${TOLS:-5e-3 1e-4}
mkdir -p "$out/decks"

P=solver.linear.preconditioner
TI="--set $P.weights=true_impes"
BILU="--set $P.second.type=ilu0 --set $P.second.factor_view=block --set $P.second.trisolve=exact"  # exact block ILU(0)
BILU_ISAI="--set $P.second.type=ilu0 --set $P.second.factor_view=block --set $P.second.trisolve=isai \
--set $P.second.factor_sweeps=1"                                                     # the 60x60x20 deck's
SILU_ISAI3="--set $P.second.type=ilu0 --set $P.second.factor_view=scalar --set $P.second.trisolve=isai \
--set $P.second.sweeps=3"                                                            # ISAI(1) + 3 sweeps
AMG_ILU="--set $P.pressure.smoother=ilu0"
W="--set $P.pressure.cycle=w"
declare -A cfg=(
  [deck]="DECK"
  [default]=""
  [old_default]="--set $P.weights=quasi_impes --set $P.second.type=block_jacobi --set $P.pressure.cycle=v"
  [prev_default]="$TI --set $P.second.type=ilu0 --set $P.second.factor_view=block --set $P.second.trisolve=isai \
--set $P.second.factor_sweeps=0 --set $P.second.sweeps=0 --set $P.pressure.cycle=v"
  [true_impes]="$TI --set $P.second.type=block_jacobi --set $P.pressure.cycle=v"
  [ti_bilu0]="$TI $BILU"
  [ti_bilu0_amg_w]="$TI $BILU $W"
  [ti_bilu0_amg_ilu0]="$TI $BILU $AMG_ILU"
  [ti_bilu0_amg_ilu0_w]="$TI $BILU $AMG_ILU $W"
  [ti_bilu0_amg_ilu0s2_w]="$TI $BILU $AMG_ILU --set $P.pressure.trisolve_sweeps=2 $W"
  [ti_silu3_amg_ilu0s2_w]="$TI $SILU_ISAI3 $AMG_ILU --set $P.pressure.trisolve_sweeps=2 $W"
  [ti_bisai_amg_ilu0s2_w]="$TI $BILU_ISAI $AMG_ILU --set $P.pressure.trisolve_sweeps=2 $W"
  [ti_bj_amg_ilu0]="$TI $AMG_ILU"
  [ti_bisai_amg_w]="$TI $BILU_ISAI $W"
  [ti_bisai2_amg_w]="$TI $BILU_ISAI --set $P.second.isai_power=2 $W"
  [ti_bisai2_amg_ilu0s2_w]="$TI $BILU_ISAI --set $P.second.isai_power=2 $AMG_ILU --set $P.pressure.trisolve_sweeps=2 $W"
  [ti_bilu0f1_amg_w]="$TI $BILU --set $P.second.factor_sweeps=1 $W"
  [ti_silu3_amg_w]="$TI $SILU_ISAI3 $W"
  [ti_silu3]="$TI $SILU_ISAI3"
  [ti_silu2_amg_w]="$TI $SILU_ISAI3 --set $P.second.sweeps=2 $W"
  [ti_silu5_amg_w]="$TI $SILU_ISAI3 --set $P.second.sweeps=5 $W"
  [ti_bisai_s1]="$TI $BILU_ISAI --set $P.second.sweeps=1"
  [ti_bisai_s2]="$TI $BILU_ISAI --set $P.second.sweeps=2"
  [ti_bisai_s3]="$TI $BILU_ISAI --set $P.second.sweeps=3"
  [ti_bisai_s2_w]="$TI $BILU_ISAI --set $P.second.sweeps=2 $W"
  [ti_bisai_s3_w]="$TI $BILU_ISAI --set $P.second.sweeps=3 $W"
  [ti_bisai_s4_w]="$TI $BILU_ISAI --set $P.second.sweeps=4 $W"
  [ti_bisai2_s2_w]="$TI $BILU_ISAI --set $P.second.isai_power=2 --set $P.second.sweeps=2 $W"
  [ti_bisai_s3_amg_ilu0_w]="$TI $BILU_ISAI --set $P.second.sweeps=3 $AMG_ILU $W"
  [ti_bisai_s3_amg_ilu0s1_w]="$TI $BILU_ISAI --set $P.second.sweeps=3 $AMG_ILU --set $P.pressure.trisolve_sweeps=1 $W"
  [ti_bisai_s3_amg_ilu0s2_w]="$TI $BILU_ISAI --set $P.second.sweeps=3 $AMG_ILU --set $P.pressure.trisolve_sweeps=2 $W"
  [ti_bisai_s3_w_sw2]="$TI $BILU_ISAI --set $P.second.sweeps=3 $W --set $P.pressure.pre_sweeps=2 --set $P.pressure.post_sweeps=2"
  [ti_bisai_s3_w_c2]="$TI $BILU_ISAI --set $P.second.sweeps=3 $W --set $P.pressure.cycles=2"
  [ti_bisai_s3_c2]="$TI $BILU_ISAI --set $P.second.sweeps=3 --set $P.pressure.cycles=2"
  [ti_bisai_s3_v_c2]="$TI $BILU_ISAI --set $P.second.sweeps=3 --set $P.pressure.cycle=v --set $P.pressure.cycles=2"
  [ti_bisai_s3_v_c3]="$TI $BILU_ISAI --set $P.second.sweeps=3 --set $P.pressure.cycle=v --set $P.pressure.cycles=3"
  [ti_bisai_s3_w_m4]="$TI $BILU_ISAI --set $P.second.sweeps=3 $W --set $P.pressure.aggregation=matching --set $P.pressure.aggregate_size=4"
  [jo085]="--set $P.pressure.jacobi_omega=0.85"
  [jo09]="--set $P.pressure.jacobi_omega=0.9"
  [jo09_c2]="--set $P.pressure.jacobi_omega=0.9 --set $P.pressure.cycles=2"
  [ti_bisai_s3_w_sw2_m4]="$TI $BILU_ISAI --set $P.second.sweeps=3 $W --set $P.pressure.pre_sweeps=2 --set $P.pressure.post_sweeps=2 --set $P.pressure.aggregation=matching --set $P.pressure.aggregate_size=4"
)
order=(deck default old_default prev_default true_impes ti_bilu0 ti_bilu0_amg_w ti_bilu0_amg_ilu0 ti_bilu0_amg_ilu0_w
       ti_bilu0_amg_ilu0s2_w ti_silu3_amg_ilu0s2_w ti_bisai_amg_ilu0s2_w ti_bj_amg_ilu0 ti_bisai_amg_w ti_bisai2_amg_w
       ti_bisai2_amg_ilu0s2_w ti_bilu0f1_amg_w ti_silu3_amg_w)
[[ $# -gt 0 ]] && order=("$@")
for c in "${order[@]}"; do [[ -v cfg[$c] ]] || { echo "cpr_quality.sh: unknown configuration '$c' (known: ${!cfg[*]})"; exit 1; }; done

# The deck with its [solver.linear...] tables replaced by FGMRES + CPR with the defaults.
strip_solver() {
  awk 'BEGIN { skip = 0 }
       /^\[solver\.linear/ { skip = 1; next }
       /^\[/ && skip { skip = 0; print "[solver.linear]\nmethod = \"fgmres\"\nmax_iterations = 1000\n\n[solver.linear.preconditioner]\ntype = \"cpr\"\n" }
       !skip { print }
       END { if (skip) print "[solver.linear]\nmethod = \"fgmres\"\nmax_iterations = 1000\n\n[solver.linear.preconditioner]\ntype = \"cpr\"" }' "$1"
}
decks=()
case $deckset in
  qfs) decks=(quarter_five_spot quarter_five_spot_60x60x20) ;;
  mc) decks=(multicomponent_3 multicomponent_8 multicomponent_16_cut) ;;
  all) decks=(quarter_five_spot quarter_five_spot_60x60x20 multicomponent_3 multicomponent_8 multicomponent_16_cut) ;;
  *) echo "cpr_quality.sh: deck set '$deckset' is not qfs, mc or all"; exit 1 ;;
esac
for d in "${decks[@]}"; do
  if [[ $d == multicomponent_16_cut ]]; then
    sed -e 's/^nx = 30$/nx = 10/' -e 's/^ny = 30$/ny = 10/' -e 's/^i = 30$/i = 10/' -e 's/^j = 30$/j = 10/' \
        "$here/inputs/multicomponent_16.toml" > "$out/decks/${d}_shipped.toml"
  else
    cp "$here/inputs/$d.toml" "$out/decks/${d}_shipped.toml"
  fi
  strip_solver "$out/decks/${d}_shipped.toml" > "$out/decks/$d.toml"
done

extra=()
[[ -n ${END_TIME:-} ]] && extra+=(--set "schedule.end_time=$END_TIME")
[[ $backend == cpu ]] && extra+=(--threads "${THREADS:-2}")
printf '%-24s %-28s %-6s %5s %4s %6s %7s %7s %7s %11s %11s\n' config deck tol steps cuts newton linear lin/N app/N \
  "linear ms/N" "total ms/N"
for d in "${decks[@]}"; do
  for tol in $tols; do
    for c in "${order[@]}"; do
      deck=$out/decks/$d.toml
      sets=${cfg[$c]}
      if [[ $sets == DECK ]]; then deck=$out/decks/${d}_shipped.toml; sets=""; fi
      dir=$out/runs/$c-$d-$tol
      mkdir -p "$dir"
      # shellcheck disable=SC2086  # the --set words
      "$bin" run "$deck" --backend "$backend" --output "$dir" --set output.vtk=false \
        --set "solver.linear.tolerance=$tol" $sets "${extra[@]}" > "$dir/log.txt" 2>&1
      rc=$?
      awk -v c="$c" -v d="$d" -v t="$tol" -v rc="$rc" '
        /^done: / { st = $2; cu = $4; nw = $6; li = $9 }
        /preconditioner applications in/ { ap = $2 }
        /^time: / { tot = $2; for (i = 1; i <= NF; ++i) { if ($i == "setup") su = $(i + 1); if ($i == "solve") so = $(i + 1) } }
        END {
          if (nw == "" || nw == 0) { printf "%-24s %-28s %-6s FAILED (exit %s; see the log)\n", c, d, t, rc; exit }
          printf "%-24s %-28s %-6s %5d %4d %6d %7d %7.2f %7.2f %11.2f %11.2f\n", c, d, t, st, cu, nw, li, li / nw,
                 ap / nw, 1000 * (su + so) / nw, 1000 * tot / nw }' "$dir/log.txt"
    done
  done
done
