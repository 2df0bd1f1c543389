#!/usr/bin/env bash
# The device runs behind issue 30's notes from session 41 on (verification/results/issue30_s41_*): the fused
# Gram-Schmidt step against cuBLAS's in `bench solver` and in the runs, the backend's start-up split. Logs in
# /tmp/L, packed by the caller. Run verification/stamp_provenance.sh here first; carry .gpu-carry.
# From session 42: A/B against reference trees (.gpu-carry/ab_src*.tgz: git archives, their names one a line in
# .gpu-carry/ab_names): abref builds them, abrun runs the 60x60x20 deck and its 1M variant on each tree and on this
# one (two rounds, alternated), abasm their `bench model` assembly (72k, 1M); kprof1m
# ncu's kernel times in the 1M variant's first launches.
#   usage: verification/issue30_gpu.sh [build|ktests|gputests|gsbench|gsrun|abref|abrun|abasm|kprof1m|kprof72k|sweep|forcing]...
set -uo pipefail
export NCCL_NVLS_ENABLE=0
L=/tmp/L; mkdir -p $L
B=${B:-/tmp/blockres-build}; X=$B/miniapp/blockres
# The 200x200x25 variant of the 60x60x20 deck (1M cells, 30 days), as in the issue's table.
Q=(--set grid.nx=200 --set grid.ny=200 --set grid.nz=25 --set grid.dx=1.5 --set grid.dy=1.5 --set grid.dz=0.8
   --set wells.PROD.i=200 --set wells.PROD.j=200 --set schedule.end_time=30 --set schedule.report_interval=30)
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,temperature.gpu --format=csv,noheader >> $L/gpu.txt 2>&1
refs=()
for m in "$@"; do
  case $m in
    build) verification/issue29_gpu.sh build ;;
    ktests)  # the Krylov and vector GPU tests alone
      for t in linalg/test/test_krylov_gpu linalg/test/test_linalg_gpu; do
        BLOCKRES_REQUIRE_GPU=1 $B/$t > $L/$(basename $t).log 2>&1; echo "== $(basename $t) rc $?"
        grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $L/$(basename $t).log | head -8
      done ;;
    gputests) verification/issue29_gpu.sh gputests ;;
    gsbench)  # bench solver's iteration cost: GMRES/FGMRES(30) with the fused, cuBLAS and own Gram-Schmidt, bs 2,
              # 42^3 (74k cells, the 60x60x20 deck's size) and 100^3 (1M)
      for side in 42 100; do
        $X bench solver --bs 2 --side $side --methods gmres,fgmres --no-solve --json $L/gsbench_$side.json \
          > $L/gsbench_$side.txt 2>&1
        echo "== bench solver side $side rc $?"; grep -E "copy:|gmres" $L/gsbench_$side.txt | cut -c1-160
      done ;;
    gsrun)  # the 60x60x20 deck and its 1M variant with gram_schmidt = fused (the default) and cublas, two rounds,
            # alternated
      for k in 1 2; do
        for g in 72k 1m; do
          for gs in fused cublas; do
            G=(); [[ $g == 1m ]] && G=("${Q[@]}")
            $X run inputs/quarter_five_spot_60x60x20.toml --backend cuda --output /tmp/runs/gs --set output.vtk=false \
              "${G[@]}" --set solver.linear.gram_schmidt=\"$gs\" > $L/gs_${g}_${gs}_$k.log 2>&1
            echo "== $g $gs #$k rc $? $(grep -E '^done' $L/gs_${g}_${gs}_$k.log | cut -c7-100)"
            grep -E "^time:|^backend start-up|^start-up parts|^linear iteration" $L/gs_${g}_${gs}_$k.log | cut -c1-330
          done
        done
      done ;;
    abref)  # build the reference trees (issue29_gpu.sh abref: the blockres target only)
      B=$B verification/issue29_gpu.sh abref; refs=($(cat $L/ab_bins)) ;;
    abrun)  # the runs on every tree, alternated, AB_ROUNDS (2) rounds; "process" is the wall time of the whole
            # process (library loading, CUDA start-up and teardown, the result file's commit included)
      for k in $(seq ${AB_ROUNDS:-2}); do
        for g in 72k 1m; do
          j=0
          for x in "${refs[@]}" $X; do
            j=$((j + 1)); G=(); [[ $g == 1m ]] && G=("${Q[@]}")
            t0=$(date +%s.%N)
            $x run inputs/quarter_five_spot_60x60x20.toml --backend cuda --output /tmp/runs/ab --set output.vtk=false \
              "${G[@]}" > $L/abrun_${g}_${j}_$k.log 2>&1
            rc=$?; t1=$(date +%s.%N)
            echo "== $g tree $j #$k rc $rc process $(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") s $(grep -E '^done' $L/abrun_${g}_${j}_$k.log | cut -c7-100)"
            grep -E "^time:|^start-up parts|^preconditioner parts" $L/abrun_${g}_${j}_$k.log | cut -c1-400
          done
        done
      done ;;
    abasm)  # bench model's assembly on every tree, alternated, two rounds (issue29_gpu.sh's loop)
      AB_BINS="${refs[*]}" B=$B verification/issue29_gpu.sh abasm_run ;;
    kprof1m)  # ncu's time of each kernel (graph nodes one by one) in the first KPROF_COUNT launches of the 1M variant
      ncu --csv --print-units base --metrics gpu__time_duration.sum -c ${KPROF_COUNT:-1500} \
        $X run inputs/quarter_five_spot_60x60x20.toml --backend cuda --output /tmp/runs/kp --set output.vtk=false \
        "${Q[@]}" --set schedule.end_time=${KPROF_DAYS:-1} --set schedule.report_interval=${KPROF_DAYS:-1} \
        > $L/kprof1m.csv 2> $L/kprof1m.err
      echo "== kprof1m rc $? $(grep -c gpu__time_duration $L/kprof1m.csv) kernels"
      python3 verification/probes/kernel_times.py $L/kprof1m.csv --top 40 > $L/kprof1m_top.txt 2>&1; head -45 $L/kprof1m_top.txt ;;
    kprof72k)  # as kprof1m, on the 60x60x20 deck itself (its first KPROF_DAYS days; KPROF_SET: one more --set)
      KS=(); [[ -n ${KPROF_SET:-} ]] && KS=(--set "$KPROF_SET")
      ncu --csv --print-units base --metrics gpu__time_duration.sum -c ${KPROF_COUNT:-1500} \
        $X run inputs/quarter_five_spot_60x60x20.toml --backend cuda --output /tmp/runs/kp --set output.vtk=false \
        --set schedule.end_time=${KPROF_DAYS:-1} --set schedule.report_interval=${KPROF_DAYS:-1} "${KS[@]}" \
        > $L/kprof72k.csv 2> $L/kprof72k.err
      echo "== kprof72k rc $? $(grep -c gpu__time_duration $L/kprof72k.csv) kernels"
      python3 verification/probes/kernel_times.py $L/kprof72k.csv --top 40 > $L/kprof72k_top.txt 2>&1; head -45 $L/kprof72k_top.txt ;;
    sweep)  # the CPR pressure stage's cycle parameters on the 1M variant and the 72k deck, two rounds, alternated:
            # the default against each `--set` variant of SWEEP_VARIANTS (';'-separated, '+' joins keys of one variant);
            # each run stopped after SWEEP_TIMEOUT (20) s: session 42's first sweep lost a whole call to a variant without it
      P=solver.linear.preconditioner.pressure
      IFS=';' read -ra V <<< "${SWEEP_VARIANTS:-default;$P.post_sweeps=0;$P.pre_sweeps=0;$P.keep_interpolation=true;$P.theta=0.25;$P.aggregation=\"matching\"+$P.aggregate_size=8}"
      for k in $(seq ${SWEEP_ROUNDS:-2}); do
        for g in ${SWEEP_CASES:-1m 72k}; do
          j=0
          for v in "${V[@]}"; do
            j=$((j + 1))
            G=(); [[ $g == 1m ]] && G=("${Q[@]}")
            S=(); [[ $v != default ]] && { IFS='+' read -ra kv <<< "$v"; for e in "${kv[@]}"; do S+=(--set "$e"); done; }
            tag=$(echo "$v" | tr -c 'a-zA-Z0-9_=.\n' '_' | sed "s/solver.linear.preconditioner.pressure./p./g" | cut -c1-60)
            # a variant whose solves fail cuts steps for minutes: stopped after SWEEP_TIMEOUT seconds
            timeout ${SWEEP_TIMEOUT:-20} $X run inputs/quarter_five_spot_60x60x20.toml --backend cuda --output /tmp/runs/sw \
              --set output.vtk=false "${G[@]}" "${S[@]}" > $L/sweep_${g}_${j}_${tag}_$k.log 2>&1
            echo "== $g [$tag] #$k rc $? $(grep -E '^done' $L/sweep_${g}_${j}_${tag}_$k.log | cut -c7-100)"
            grep -E "^time:|^preconditioner built" $L/sweep_${g}_${j}_${tag}_$k.log | cut -c1-260
          done
        done
      done ;;
    forcing)  # the default forcing (Eisenstat-Walker, session 42) against the fixed 1e-4 before it, rounds alternated:
              # FORCING_CASES (72k 1m nc16 nc32 nc64), each run stopped after 30 s; nc 32 and 64 also with
              # Eisenstat-Walker named (their default keeps the fixed term) at eta_max 0.001 and 0.01
      for k in $(seq ${FORCING_ROUNDS:-2}); do
        for g in ${FORCING_CASES:-72k 1m nc16 nc32 nc64}; do
          d=quarter_five_spot_60x60x20; G=()
          case $g in 1m) G=("${Q[@]}") ;; nc16) d=multicomponent_16 ;; nc32) d=multicomponent_32 ;; nc64) d=multicomponent_64 ;; esac
          V=(default fixed); [[ $g == nc32 || $g == nc64 ]] && V=(default ew001 ew0001)
          for v in "${V[@]}"; do
            S=()
            case $v in
              fixed) S=(--set 'solver.linear.forcing="fixed"') ;;
              ew001) S=(--set 'solver.linear.forcing="eisenstat_walker"' --set solver.linear.eta_max=0.01) ;;
              ew0001) S=(--set 'solver.linear.forcing="eisenstat_walker"' --set solver.linear.eta_max=0.001) ;;
            esac
            timeout 30 $X run inputs/$d.toml --backend cuda --output /tmp/runs/fo --set output.vtk=false "${G[@]}" "${S[@]}" \
              > $L/forcing_${g}_${v}_$k.log 2>&1
            echo "== $g $v #$k rc $? $(grep -E '^done' $L/forcing_${g}_${v}_$k.log | cut -c7-100)"
            grep -E "^time:" $L/forcing_${g}_${v}_$k.log | cut -c1-200
          done
        done
      done ;;
    *) echo "unknown mode $m"; exit 2 ;;
  esac
done
