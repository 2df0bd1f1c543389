#!/usr/bin/env bash
# The device runs behind issue 32's closing note: the bench suite on a GPU (recording the medium and large
# application baselines, then the default suite checked against them), its plots and the FP64 kernel's GPU
# test. Logs in /tmp/L, the caller tars them to $OUT. Run verification/stamp_provenance.sh here first; carry
# .gpu-carry. Build with verification/issue29_gpu.sh build first (same build folder).
#   usage: verification/issue32_gpu.sh [fp64test|record|suite|plot]...
set -uo pipefail
export NCCL_NVLS_ENABLE=0
L=/tmp/L; mkdir -p $L
B=${B:-/tmp/blockres-build}; X=$B/miniapp/blockres
BL=$L/baselines_gpu.json
for m in "$@"; do
  case $m in
    fp64test)
      $B/linalg/test/test_linalg_gpu --gtest_filter='*Fp64*:*StreamSum*' > $L/fp64test.log 2>&1; echo "== fp64 test rc $?"
      grep -E "PASSED|FAILED" $L/fp64test.log ;;
    record)  # the application baselines of medium and large on this GPU (the reports say INVALID: nothing checked)
      for s in ${RECORD_SIZES:-medium large}; do
        /usr/bin/time -f "%e s wall" timeout ${RECORD_TIMEOUT:-240} $X bench --size $s --record-baselines $BL \
          --json $L/suite_${s}_record.json > $L/suite_${s}_record.log 2>&1
        echo "== record $s rc $?"; tail -1 $L/suite_${s}_record.log
        grep -E "^(ceilings|verdict|  invalid|suite score)" $L/suite_${s}_record.log | head -8
      done ;;
    suite)  # the default suite (size auto), checked against the repository's baselines (SUITE_BASELINES=recorded:
            # against the ones `record` just wrote)
      bl=(); [ "${SUITE_BASELINES:-}" = recorded ] && bl=(--baselines $BL)
      /usr/bin/time -f "%e s wall" timeout ${SUITE_TIMEOUT:-420} $X bench "${bl[@]}" --json $L/suite_auto.json \
        > $L/suite_auto.log 2>&1
      echo "== suite rc $?"; tail -1 $L/suite_auto.log
      sed -n '/^== blockres bench suite/,$p' $L/suite_auto.log | head -80 ;;
    plot)
      $X plot $L/suite_auto.json --output $L/plots > $L/plot.log 2>&1; echo "== plot rc $?"; cat $L/plot.log ;;
  esac
done
