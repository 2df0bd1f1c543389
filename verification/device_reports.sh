#!/usr/bin/env bash
# The device runs behind verification/results/*_h{100,200}_2026-11-26.* (issues 16-18): GPU tests with and without
# BLOCKRES_REQUIRE_GPU, the CUDA restart check, the issue-16 decks, bench amg, bench bsrmv (part 1), batched
# and isai. Logs in /tmp/L, packed to $OUT/logs_<modes>.tgz. Run verification/stamp_provenance.sh first.
#   ISAI_SIDE (default 120, the bench default) bounds the isai stencils.
#   usage: verification/device_reports.sh [tests|decks|huge|amg|bsrmv1|bsrmv2|batched|isai]...
set -uo pipefail
L=/tmp/L; mkdir -p $L
B=/tmp/blockres-build; X=$B/miniapp/blockres
OUT=$L verification/h200_amg.sh none > $L/setup.log 2>&1; tail -2 $L/setup.log
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv > $L/gpu.txt 2>&1
jac() {  # Jacobians of both quarter five-spot decks (as the stored reports used)
  J=/tmp/J; mkdir -p $J
  for d in quarter_five_spot quarter_five_spot_60x60x20; do
    [[ -f $J/$d.h5 ]] || $X run inputs/$d.toml --output /tmp/runs/jac --set output.vtk=false --write-jacobian $J/$d.h5 > $L/jac_$d.log 2>&1
  done
}
for m in "$@"; do
  case $m in
    tests)
      ctest --test-dir $B -L gpu -j 4 --output-on-failure > $L/ctest_gpu.log 2>&1; echo "== ctest -L gpu rc $?"
      grep -E "tests passed|\(Failed\)|Skipped" $L/ctest_gpu.log | head
      BLOCKRES_REQUIRE_GPU=1 ctest --test-dir $B -L gpu -j 4 > $L/ctest_gpu_require.log 2>&1; echo "== REQUIRE_GPU ctest rc $?"
      grep -E "tests passed|\(Failed\)" $L/ctest_gpu_require.log | head
      ctest --test-dir $B -R "require_gpu" > $L/ctest_require.log 2>&1; echo "== require_gpu.* rc $?"; grep -E "tests passed|Failed|Skipped" $L/ctest_require.log | head -5
      OUT=$L verification/h200_amg.sh restart 2>&1 | grep -v "^NVIDIA\|^build wall" ;;
    decks)
      OUT=$L verification/h200_amg.sh deck 1M 1M 1M large 2>&1 | grep -v "^NVIDIA\|^build wall" ;;
    huge) OUT=$L verification/h200_amg.sh huge 2>&1 | grep -v "^NVIDIA\|^build wall" ;;
    amg)
      $X bench amg --backend cuda --deck inputs/quarter_five_spot_60x60x20.toml --deck inputs/multicomponent_8.toml \
        --deck inputs/quarter_five_spot.toml --reps 3 --json $L/bench_amg.json > $L/bench_amg.txt 2>&1
      echo "== bench amg rc $?"; sed -n '/^targets for the H200/,$p' $L/bench_amg.txt | head -12 ;;
    bsrmv1) jac; $X bench bsrmv --tune --bs 1,2,3,4,5,6,7,8 --jacobian /tmp/J/quarter_five_spot_60x60x20.h5 --json $L/bench_bsrmv_1.json > $L/bench_bsrmv_1.txt 2>&1
      echo "== bench bsrmv 1 rc $?"; grep -E "copy|report written" $L/bench_bsrmv_1.txt ;;
    bsrmv2) $X bench bsrmv --tune --bs 10,12,16,20,24,32,40,48,64 --powerlaw-bs 16 --json $L/bench_bsrmv_2.json > $L/bench_bsrmv_2.txt 2>&1
      echo "== bench bsrmv 2 rc $?"; grep -E "copy|report written" $L/bench_bsrmv_2.txt ;;
    batched) jac; $X bench batched --jacobian /tmp/J/quarter_five_spot.h5 --jacobian /tmp/J/quarter_five_spot_60x60x20.h5 --json $L/bench_batched.json > $L/bench_batched.txt 2>&1
      echo "== bench batched rc $?"; grep -E "report written" $L/bench_batched.txt ;;
    isai) jac; $X bench isai --max-side ${ISAI_SIDE:-120} --reps 5 --warmup 2 --jacobian /tmp/J/quarter_five_spot.h5 --jacobian /tmp/J/quarter_five_spot_60x60x20.h5 --json $L/bench_isai.json > $L/bench_isai.txt 2>&1
      echo "== bench isai rc $?"; grep -E "report written" $L/bench_isai.txt ;;
  esac
done
tag=$(echo "$@" | tr ' ' '_')
tar czf $OUT/logs_$tag.tgz -C $L .
