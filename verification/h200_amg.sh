#!/usr/bin/env bash
# GPU-machine session for issue 16 (device tool): build with CUDA for sm_90 (TARGETS="..." limits the
# build), then: tests (AMG and CPR GPU tests), deck (the shipped 60x60x20 deck), large (its 1M- and
# 4M-cell variants of issue 16), huge (400x400x63 = 10M cells, 10 days), bench (blockres bench amg,
# the report in verification/results/amg_h200_*). Logs under $OUT. Run verification/stamp_provenance.sh here
# first: the copy on the GPU machine has no .git, its reports take the commit and diff from that stamp.
#   usage: [DECK=...] [EXTRA="--set ..."] verification/h200_amg.sh [tests|deck|large|1M|huge|bench|none]...
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
B=${B:-/tmp/blockres-build}  # build directory (B=... to keep a second tree apart)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"
if [[ ! -f $B/build.ninja ]]; then
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DBLOCKRES_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DCMAKE_PREFIX_PATH="$PWD/.gpu-carry" -DTOMLPP_INCLUDE_DIR="$PWD/.gpu-carry/include" \
        -DCLI11_INCLUDE_DIR="$PWD/.gpu-carry/include" -DNLOHMANN_JSON_INCLUDE_DIR="$PWD/.gpu-carry/include" \
        -DBLOCKRES_PROVENANCE_DIR="$PWD/.gpu-carry/provenance" ${BLOCKRES_CMAKE_EXTRA:-} \
        > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
fi
/usr/bin/time -f "build wall %e s" cmake --build $B -j 16 ${TARGETS:+--target $TARGETS} > "$OUT/build.log" 2>&1 ||
  { grep -E "error|Error" "$OUT/build.log" | head -40; exit 1; }
tail -1 "$OUT/build.log"
X=$B/miniapp/blockres
# The shipped 60x60x20 deck (FGMRES + CPR: true-IMPES, AMG, block ILU(0)/ISAI) and its variants.
DECK=${DECK:-inputs/quarter_five_spot_60x60x20.toml}
CPR=()
M1=(--set grid.nx=200 --set grid.ny=200 --set grid.nz=25 --set grid.dx=1.5 --set grid.dy=1.5 --set grid.dz=0.8
    --set wells.PROD.i=200 --set wells.PROD.j=200 --set schedule.end_time=30 --set schedule.report_interval=30)
M4=(--set grid.nx=400 --set grid.ny=400 --set grid.nz=25 --set grid.dx=0.75 --set grid.dy=0.75 --set grid.dz=0.8
    --set wells.PROD.i=400 --set wells.PROD.j=400 --set schedule.end_time=2 --set schedule.report_interval=2
    --set schedule.dt_initial=0.125)
M10=(--set grid.nx=400 --set grid.ny=400 --set grid.nz=63 --set grid.dx=0.75 --set grid.dy=0.75 --set grid.dz=0.32
     --set wells.PROD.i=400 --set wells.PROD.j=400 --set schedule.end_time=10 --set schedule.report_interval=10)
run() {  # name, args...
  local name=$1; shift
  mkdir -p /tmp/runs/$name
  /usr/bin/time -f "$name wall %e s, max RSS %M kB" $X run "$@" ${EXTRA:-} --backend cuda --set output.directory=/tmp/runs/$name \
    > "$OUT/$name.log" 2>&1
  echo "== $name (rc $?)"; grep -E "^done|^linear|^time|^preconditioner parts|wall|error|Error" "$OUT/$name.log" | head -8
}
for what in "${@:-tests}"; do
  case $what in
    tests)
      for t in linalg/preconditioners/amg/test_amg_gpu kernels/cpr/test_cpr_gpu linalg/preconditioners/amg/test_amg physics/test/test_physics_gpu; do
        [[ -x $B/$t ]] || continue
        $B/$t > "$OUT/$(basename $t).log" 2>&1; echo "== $t rc $?"; grep -E "FAILED|PASSED|Failure|iterations" "$OUT/$(basename $t).log" | head -20
      done ;;
    deck) run cpr_60x60x20 $DECK "${CPR[@]}" ;;
    large) run cpr_1M $DECK "${CPR[@]}" "${M1[@]}"; run cpr_4M $DECK "${CPR[@]}" "${M4[@]}" ;;
    1M) run cpr_1M $DECK "${CPR[@]}" "${M1[@]}" ;;
    huge) run cpr_10M $DECK "${CPR[@]}" "${M10[@]}" ;;
    restart)  # issue 17: the deck on CUDA restarted from report 5 of its own result and from the checkpoint
              # of a run stopped by SIGTERM, each verified against the uninterrupted run; then test_restart_gpu
              # (TARGETS="blockres test_restart_gpu").
      R=/tmp/runs/restart; rm -rf $R; mkdir -p $R
      NAME=$(basename "$DECK" .toml)
      ro=(--backend cuda --set output.vtk=false ${EXTRA:-})
      $X run $DECK "${ro[@]}" --output $R/full > "$OUT/restart_full.log" 2>&1; echo "== restart: uninterrupted run rc $?"
      grep -E "^done" "$OUT/restart_full.log"
      $X run $DECK "${ro[@]}" --output $R/mid --restart $R/full/$NAME.h5 --restart-report 5 > "$OUT/restart_mid.log" 2>&1
      echo "== restart: from report 5 rc $?"; grep -E "^restart from|^preconditioner: first|^done|error" "$OUT/restart_mid.log"
      $X verify $R/mid/$NAME.h5 --baseline $R/full/$NAME.h5 --json "$OUT/restart_mid_verify.json" > "$OUT/restart_mid_verify.txt" 2>&1
      echo "== restart: verify (from report 5) rc $?"; tail -2 "$OUT/restart_mid_verify.txt"
      # Stopped by SIGTERM once its first checkpoint is there, then continued from the checkpoint.
      $X run $DECK "${ro[@]}" --output $R/term --set output.checkpoint=true > "$OUT/restart_term.log" 2> "$OUT/restart_term.err" &
      pid=$!
      for _ in $(seq 3000); do [[ -f $R/term/$NAME.checkpoint.h5 ]] && break; sleep 0.01; done
      sleep 0.3; kill -TERM $pid; wait $pid; rc=$?
      echo "== restart: SIGTERM rc $rc (143 expected): $(cat "$OUT/restart_term.err")"; ls -A $R/term
      if [[ $rc == 143 ]]; then
        $X run $DECK "${ro[@]}" --output $R/term --set output.checkpoint=true --restart $R/term/$NAME.checkpoint.h5 \
          > "$OUT/restart_resumed.log" 2>&1; echo "== restart: from the checkpoint rc $?"
        grep -E "^restart from|^done|error" "$OUT/restart_resumed.log"
        $X verify $R/term/$NAME.h5 --baseline $R/full/$NAME.h5 --json "$OUT/restart_term_verify.json" \
          > "$OUT/restart_term_verify.txt" 2>&1; echo "== restart: verify (from the checkpoint) rc $?"
        tail -2 "$OUT/restart_term_verify.txt"; ls -A $R/term
      fi
      [[ -x $B/verification/test_restart_gpu ]] && { $B/verification/test_restart_gpu > "$OUT/test_restart_gpu.log" 2>&1
        echo "== test_restart_gpu rc $?"; grep -E "FAILED|PASSED|Failure|worst" "$OUT/test_restart_gpu.log" | head -20; } ;;
    bench) $X bench amg --backend cuda --deck inputs/quarter_five_spot_60x60x20.toml --deck inputs/multicomponent_8.toml \
             --deck inputs/quarter_five_spot.toml --reps 3 --json "$OUT/bench_amg.json" > "$OUT/bench_amg.txt" 2>&1
           echo "== bench rc $?"; sed -n '/^summary/,$p' "$OUT/bench_amg.txt" ;;
  esac
done
