#!/usr/bin/env bash
# The device runs behind issue 31's notes from session 44 on (verification/results/issue31_s44_*): the batched kernel
# table against cuBLAS at the current tree, the mixed batches, ncu of the kernels below the targets, and the in-solver
# second stage of the nc 32 / nc 64 decks. Logs in /tmp/L, packed by the caller. Run verification/stamp_provenance.sh
# here first; carry .gpu-carry.
#   usage: verification/issue31_gpu.sh [build|gputests|btests|table|mixed|ncu|insolver|insolverk|lusolve]...
set -uo pipefail
export NCCL_NVLS_ENABLE=0
L=/tmp/L; mkdir -p $L
INSOLVER_TAG=${INSOLVER_TAG:-}
B=${B:-/tmp/blockres-build}; X=$B/miniapp/blockres
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,temperature.gpu --format=csv,noheader >> $L/gpu.txt 2>&1
pct() {  # pct FILE VARIANT...: "% of copy" per size for each variant of a bench batched text report
  for v in "$@"; do
    awk -v v="$v" '$3 == v {s = s sprintf(" %s:%s", $1, $8)} END {print v ":" s}' "$1"
  done
}
for m in "$@"; do
  case $m in
    build) verification/issue29_gpu.sh build ;;
    gputests) verification/issue29_gpu.sh gputests ;;
    btests)  # the batched kernels' GPU tests alone
      for t in kernels/batched/test_batched_gh_gpu kernels/batched/test_batched_lu_gpu; do
        BLOCKRES_REQUIRE_GPU=1 $B/$t > $L/$(basename $t).log 2>&1; echo "== $t rc $?"; tail -1 $L/$(basename $t).log
        grep -E "FAILED|Failure" $L/$(basename $t).log | head -5
      done ;;
    table)  # bench batched: every size 1..32 and the LU sizes above, the default 9..32 mixed batch (TABLE_SIZES,
            # TABLE_REPS override)
      $X bench batched --only kernels --sizes ${TABLE_SIZES:-$(seq -s, 1 32),33,40,48,56,64,96,128,256,512} \
        --reps ${TABLE_REPS:-15} --json $L/table.json > $L/table.txt 2>&1
      echo "== bench batched rc $?"; grep -E "copy:|^mixed" $L/table.txt | cut -c1-200
      pct $L/table.txt gh_factor gh_factor_t gh_solve gh_solve_t gje_invert block_diag_gemv lu_factor lu_solve ;;
    mixed)  # the mixed 33..64 batch (LU only) against the uniform batch of its mean size
      $X bench batched --only kernels --sizes 48,49 --mixed 33..64 --reps 15 --json $L/mixed64.json > $L/mixed64.txt 2>&1
      echo "== mixed 33..64 rc $?"; grep -E "^mixed|against" $L/mixed64.txt | cut -c1-200 ;;
    ncu)  # ncu speed of light and stall reasons of the kernels in NCU_CASES (variant:size:kernel-regex)
      for c in ${NCU_CASES:-lu_solve:64:warp_solve lu_solve:48:warp_solve block_diag_gemv:17:gemv_kernel gh_solve:20:gh_solve_kernel}; do
        IFS=: read -r v n k <<< "$c"
        ncu --clock-control none -k regex:"$k" --launch-skip 2 -c 1 --section SpeedOfLight --section Occupancy \
          --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis \
          $X bench batched --only kernels --sizes $n --mixed none --reps 3 --warmup 1 > $L/ncu_${v}_$n.txt 2>&1
        echo "== ncu $v $n rc $?"
        grep -E "Duration|DRAM Throughput|L1/TEX Cache Throughput|L2 Cache Throughput|Achieved Occupancy|Registers Per|Stall|Warp Cycles Per Issued|Theoretical Occupancy|Block Limit" \
          $L/ncu_${v}_$n.txt | head -16
      done ;;
    insolver)  # issue 31's in-solver check: the nc 32 and nc 64 decks with their default CPR, graph off so that the
               # second stage's apply is timed on its own (per application against its bytes: see the results file)
      for d in ${INSOLVER_DECKS:-multicomponent_32 multicomponent_64}; do
        $X run inputs/$d.toml --backend cuda --output /tmp/runs/is --set output.vtk=false \
          --set solver.linear.preconditioner.graph=false > $L/insolver_$d$INSOLVER_TAG.log 2>&1
        echo "== $d$INSOLVER_TAG rc $?"
        grep -E "^done|^linear|^time|preconditioner (parts|built)|^BSRMV|copy" $L/insolver_$d$INSOLVER_TAG.log | cut -c1-400
      done ;;
    lusolve)  # the LU solve at 17..64 and the mixed 33..64 batch, LUSOLVE_ROUNDS rounds (session 44 compared the panel
              # solve's shapes with warp_solve through a switch that is not in the tree: results file)
      BLOCKRES_REQUIRE_GPU=1 timeout 120 $B/kernels/batched/test_batched_lu_gpu > $L/lutest.log 2>&1
      echo "== test_batched_lu_gpu rc $? $(tail -1 $L/lutest.log)"
      for k in $(seq 1 ${LUSOLVE_ROUNDS:-1}); do
        timeout 150 $X bench batched --only kernels --sizes ${LUSOLVE_SIZES:-17,24,32,33,40,48,49,56,57,64} \
          --mixed 33..64 --reps 15 --json $L/lusolve_$k.json > $L/lusolve_$k.txt 2>&1
        echo "== round $k rc $? $(grep -E 'copy:' $L/lusolve_$k.txt)"
        awk '$3 == "lu_solve" {s = s sprintf(" %s:%s %sms", $1, $8, $4)} END {print "  lu_solve" s}' $L/lusolve_$k.txt
        grep -E "^mixed 33..64.*lu_solve" $L/lusolve_$k.txt | cut -c1-160
      done ;;
    insolverk)  # the in-solver second stage kernel by kernel: ncu's duration and DRAM bytes of the block-Jacobi apply
                # and of CPR's pressure residual in the nc 32 / nc 64 decks' first INSOLVERK_COUNT (60) such launches
      for d in ${INSOLVER_DECKS:-multicomponent_32 multicomponent_64}; do
        ncu --csv --print-units base --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
          -k regex:"panel_solve|warp_solve|gemv_kernel|pressure_residual_kernel" -c ${INSOLVERK_COUNT:-60} \
          $X run inputs/$d.toml --backend cuda --output /tmp/runs/isk --set output.vtk=false \
          --set schedule.end_time=1 --set schedule.report_interval=1 > $L/insolverk_$d$INSOLVER_TAG.csv 2> $L/insolverk_$d.err
        echo "== ncu $d$INSOLVER_TAG rc $?"
        python3 - "$L/insolverk_$d$INSOLVER_TAG.csv" <<'PY'
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1])))
start = next(i for i, r in enumerate(rows) if r and r[0] == "ID")  # the run's own log lines come first
h = rows[start]; k = h.index("Kernel Name"); mn = h.index("Metric Name"); mv = h.index("Metric Value")
rows = [r for r in rows[start:] if len(r) == len(h)]
acc = collections.defaultdict(lambda: collections.defaultdict(list))
for r in rows[1:]:
    acc[r[k].split("(")[0][:60]][r[mn]].append(float(r[mv].replace(",", "")))
for name, m in acc.items():
    t = m["gpu__time_duration.sum"]; rd = m["dram__bytes_read.sum"]; wr = m["dram__bytes_write.sum"]
    t2, rd2, wr2 = t[1:] or t, rd[1:] or rd, wr[1:] or wr  # the first launch cold
    print(f"  {name}: {len(t)} launches, {sum(t2)/len(t2)/1e3:.1f} us, DRAM {sum(rd2)/len(rd2)/1e6:.1f} MB read "
          f"{sum(wr2)/len(wr2)/1e6:.1f} MB written, {(sum(rd2)+sum(wr2))/sum(t2):.0f} GB/s")
PY
      done ;;
    *) echo "unknown mode $m"; exit 2 ;;
  esac
done
