#!/usr/bin/env bash
# The device runs behind issue 29's closing note (verification/results/*_2026-11-26*): GPU tests, every
# shipped deck as shipped, BSRMV with the built-in rule and with a measured tuning cache on both stencils
# at every block size, the second stage by block size at 1M cells, CPR applications per Newton iteration
# on both quarter five-spot decks. Logs in /tmp/L, packed to $OUT/logs_<modes>.tgz. Run
# verification/stamp_provenance.sh here first; carry .gpu-carry.
#   usage: verification/issue29_gpu.sh [build|detect|bsrmvtest|gputests|writer|reuse|tests|tune1|shipped|bsrmv|tune|tuned|second|cpr|cprq|probe|graph|bytes|ab|jac64|asmprof|mixed|sweep|abasm|ilu32|l2sol|omega|bsrprof|bsrmem|lat72|kprof|isaisub|second2|ilu5|classes|floor|cyc2]...
set -uo pipefail
export NCCL_NVLS_ENABLE=0
L=/tmp/L; mkdir -p $L
B=${B:-/tmp/blockres-build}; X=$B/miniapp/blockres
P=solver.linear.preconditioner
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,temperature.gpu --format=csv,noheader >> $L/gpu.txt 2>&1
run_case() {  # run_case LOG PATTERN DECK ARGS...: one CUDA run of inputs/DECK.toml into $L/LOG.log, its exit code and
              # 'done' line, then its lines matching PATTERN
  local log=$1 pat=$2 deck=$3; shift 3
  $X run inputs/$deck.toml --backend cuda --output /tmp/runs/$log --set output.vtk=false "$@" > $L/$log.log 2>&1
  echo "== $log rc $? $(grep -E '^done' $L/$log.log | cut -c7-100)"
  grep -E "$pat" $L/$log.log | cut -c1-200
}
summary() {  # the lines of a run log that the note quotes
  grep -E "^linear solver|^done|^linear:|^newton:|^time|preconditioner appl" "$1" | head -8
  echo "  linear-solver cuts: $(grep -c "cut: .*linear solver" "$1")"
}
for m in "$@"; do
  case $m in
    build) OUT=$L TARGETS=${TARGETS:-} verification/h200_amg.sh none > $L/setup.log 2>&1; tail -2 $L/setup.log ;;
    detect)  # the default CUDA architectures on this machine (configure only)
      cmake -S . -B /tmp/detect -G Ninja -DCMAKE_BUILD_TYPE=Release -DBLOCKRES_CUDA=ON \
        -DCMAKE_PREFIX_PATH="$PWD/.gpu-carry" -DTOMLPP_INCLUDE_DIR="$PWD/.gpu-carry/include" \
        -DCLI11_INCLUDE_DIR="$PWD/.gpu-carry/include" -DNLOHMANN_JSON_INCLUDE_DIR="$PWD/.gpu-carry/include" \
        > $L/detect.log 2>&1; echo "== configure rc $?"; grep -E "CUDA architectures" $L/detect.log ;;
    bsrmvtest)  # the BSRMV GPU test alone (every configuration against the CPU, the piped kernel's capped grids)
      $B/kernels/spmv/test_bsrmv_gpu > $L/test_bsrmv_gpu.log 2>&1; echo "== test_bsrmv_gpu rc $?"
      grep -E "checked|PASSED|FAILED" $L/test_bsrmv_gpu.log | head ;;
    gputests)  # the GPU tests once, a missing device an error
      BLOCKRES_REQUIRE_GPU=1 ctest --test-dir $B -L gpu -j 4 --output-on-failure > $L/ctest_gpu_require.log 2>&1
      echo "== ctest -L gpu (REQUIRE_GPU) rc $?"; grep -E "tests passed|\(Failed\)|Total Test" $L/ctest_gpu_require.log | head ;;
    tests)
      ctest --test-dir $B -L gpu -j 4 --output-on-failure > $L/ctest_gpu.log 2>&1; echo "== ctest -L gpu rc $?"
      grep -E "tests passed|\(Failed\)|\(Skipped\)" $L/ctest_gpu.log | head
      BLOCKRES_REQUIRE_GPU=1 ctest --test-dir $B -L gpu -j 4 > $L/ctest_gpu_require.log 2>&1; echo "== REQUIRE_GPU rc $?"
      grep -E "tests passed|\(Failed\)" $L/ctest_gpu_require.log | head ;;
    shipped)  # every shipped deck exactly as shipped (the default solver where the deck says nothing)
      for d in buckley_leverett quarter_five_spot quarter_five_spot_60x60x20 multicomponent_3 multicomponent_8 \
               multicomponent_16 multicomponent_32 multicomponent_64; do
        /usr/bin/time -f "wall %e s" $X run inputs/$d.toml --backend cuda --output /tmp/runs/shipped --set output.vtk=false \
          > $L/shipped_$d.log 2>&1
        echo "== $d rc $?"; summary $L/shipped_$d.log; tail -1 $L/shipped_$d.log
      done ;;
    bsrmv)  # the built-in rule (no cache), every bs, both stencils
      /usr/bin/time -f "wall %e s" $X bench bsrmv --tuning-cache none --bs $(seq -s, 1 64) --stencils 7,27 --size-gb 1 \
        --reps 10 --warmup 2 --json $L/bsrmv_rule.json > $L/bsrmv_rule.txt 2>&1
      echo "== bench bsrmv (rule) rc $?"; grep -E "copy|report written|wall" $L/bsrmv_rule.txt ;;
    tune)  # a measured cache (the default tune); a run reading it
      /usr/bin/time -f "wall %e s" $X tune --tuning-cache $L/tuning.json --json $L/tune_report.json > $L/tune.txt 2>&1
      echo "== tune rc $?"; tail -4 $L/tune.txt; cp $L/tuning.json /tmp/tuning.json
      $X run inputs/quarter_five_spot.toml --backend cuda --tuning-cache /tmp/tuning.json --output /tmp/runs/tuned \
        --set output.vtk=false > $L/run_tuned.log 2>&1; echo "== run with the cache rc $?"; grep -E "^BSRMV" $L/run_tuned.log
      h5dump -a bsrmv_tuning -a bsrmv_configs /tmp/runs/tuned/quarter_five_spot.h5 > $L/run_tuned_attrs.txt 2>&1 ;;
    tune1)  # every configuration at 1 GB per stencil matrix (the bench's size), for the built-in rule
      /usr/bin/time -f "wall %e s" $X tune --size-gb 1 --budget-s 450 --reps 5 --warmup 1 --tuning-cache $L/tuning1.json \
        --json $L/tune1_report.json > $L/tune1.txt 2>&1
      echo "== tune1 rc $?"; tail -3 $L/tune1.txt ;;
    tuned)  # bench bsrmv reading the cache that `tune` wrote
      /usr/bin/time -f "wall %e s" $X bench bsrmv --tuning-cache /tmp/tuning.json --bs $(seq -s, 1 64) --stencils 7,27 \
        --size-gb 1 --reps 10 --warmup 2 --json $L/bsrmv_tuned.json > $L/bsrmv_tuned.txt 2>&1
      echo "== bench bsrmv (tuned) rc $?"; grep -E "copy|report written|wall|tuning" $L/bsrmv_tuned.txt | head -5 ;;
    second)  # the default's second stage against block-Jacobi and the pre-issue-29 default at 1M cells
      # def: the default (bs <= 8: block ILU(0), 1 factor sweep, ISAI(1) + 3 sweeps, AMG W-cycle); bj: block-Jacobi
      # second stage with the V-cycle (the default above bs 8); old: block ILU(0)/ISAI(1), exact factorisation, V-cycle
      M=(--backend cuda --set output.vtk=false --output /tmp/runs/m --set grid.nx=100 --set grid.ny=100 --set grid.nz=100
         --set wells.PROD.i=100 --set wells.PROD.j=100 --set schedule.end_time=2 --set schedule.report_interval=2
         --set schedule.dt_max=1)
      Q=(--backend cuda --set output.vtk=false --output /tmp/runs/q --set grid.nx=200 --set grid.ny=200 --set grid.nz=25
         --set grid.dx=1.5 --set grid.dy=1.5 --set grid.dz=0.8 --set wells.PROD.i=200 --set wells.PROD.j=200
         --set schedule.end_time=30 --set schedule.report_interval=30)
      for d in ${SECOND_DECKS:-quarter_five_spot_60x60x20 multicomponent_3 multicomponent_8}; do
        for v in def bj old; do
          case $v in
            def) st=() ;;
            bj) st=(--set "$P.second={type=\"block_jacobi\"}" --set $P.pressure.cycle=v) ;;
            old) st=(--set "$P.second={type=\"ilu0\", trisolve=\"isai\", factor_sweeps=0, sweeps=0}" --set $P.pressure.cycle=v) ;;
          esac
          if [[ $d == quarter_five_spot_60x60x20 ]]; then G=("${Q[@]}"); else G=("${M[@]}"); fi
          $X run inputs/$d.toml "${G[@]}" "${st[@]}" > $L/second_${d}_$v.log 2>&1
          echo "== $d 1M second=$v rc $?"; summary $L/second_${d}_$v.log
        done
      done ;;
    classes)  # issue 31 item 3: the batched GPU tests, then bench batched's mixed batches with and without size classes
      for t in kernels/batched/test_batched_gh_gpu kernels/batched/test_batched_lu_gpu; do
        BLOCKRES_REQUIRE_GPU=1 $B/$t > $L/$(basename $t).log 2>&1; echo "== $t rc $?"; tail -1 $L/$(basename $t).log
      done
      for mx in 9..32 33..64 1..32; do
        for cl in on off; do
          sz=$(case $mx in 9..32) echo 20,21;; 33..64) echo 48,49;; *) echo 16,17;; esac)
          $X bench batched --only kernels --sizes $sz --mixed $mx --mixed-classes $cl --json $L/mixed_${mx}_$cl.json \
            > $L/mixed_${mx}_$cl.txt 2>&1
          echo "== mixed $mx classes $cl rc $?"; grep -E "^mixed" $L/mixed_${mx}_$cl.txt | cut -c1-160
        done
      done ;;
    ilu5)  # issue 31 item 5: the scalar ILU(0)'s implementations per block size (ours vs cuSPARSE vs automatic) on the
           # 7-point stencils and two simulator Jacobians; the ILU GPU tests first
      for t in kernels/ilu_isai/test_ilu_gpu linalg/preconditioners/ilu0/test_ilu_preconditioner_gpu; do
        BLOCKRES_REQUIRE_GPU=1 $B/$t > $L/$(basename $t).log 2>&1; echo "== $t rc $?"; tail -1 $L/$(basename $t).log
      done
      J=/tmp/jac; mkdir -p $J
      for d in quarter_five_spot_60x60x20; do
        $X run inputs/$d.toml --backend cuda --output /tmp/runs/jac --set output.vtk=false --write-jacobian $J/$d.h5 \
          > $L/jac_$d.log 2>&1; echo "== jacobian $d rc $?"
      done
      $X bench isai --bs ${ILU5_BS:-1,2,3,4,6,8,12,16} --size-gb ${ILU5_GB:-0.25} --powers 1 --general-powers 1 --no-solve \
        --reps 5 --warmup 2 --jacobian $J/quarter_five_spot_60x60x20.h5 \
        --json $L/isai_ilu5.json > $L/isai_ilu5.txt 2>&1
      echo "== bench isai rc $?"
      grep -E "implementation|block rows" $L/isai_ilu5.txt
      grep -E " (ilu0_setup|apply) +(ours|csrilu02|bsrilu02|automatic|SpSV|bsrsv2|ilu0 exact)" $L/isai_ilu5.txt | cut -c1-140 ;;
    second2)  # issue 31 item 4 -> issue 29 item 2: with the block ISAI generated by block substitution (9a32187), the
              # default's block-Jacobi second stage (bs > 8, or > 160k unknowns) against block ILU(0)/ISAI (1 factor
              # sweep, 3 ISAI sweeps, W-cycle: the small systems' default) on the decks where block-Jacobi is the
              # default; two runs each, alternated
      M=(--set grid.nx=100 --set grid.ny=100 --set grid.nz=100 --set wells.PROD.i=100 --set wells.PROD.j=100
         --set schedule.end_time=2 --set schedule.report_interval=2 --set schedule.dt_max=1)
      Q=(--set grid.nx=200 --set grid.ny=200 --set grid.nz=25 --set grid.dx=1.5 --set grid.dy=1.5 --set grid.dz=0.8
         --set wells.PROD.i=200 --set wells.PROD.j=200 --set schedule.end_time=30 --set schedule.report_interval=30)
      ILU=(--set "$P.second={type=\"ilu0\", factor_view=\"block\", factor_sweeps=1, trisolve=\"isai\", sweeps=3}"
           --set $P.pressure.cycle=w)
      for k in 1 2; do
        for c in ${SECOND2_CASES:-mc16 mc32 mc64 mc8_1m ow_1m}; do
          case $c in
            mc16) d=multicomponent_16; G=() ;;
            mc32) d=multicomponent_32; G=() ;;
            mc64) d=multicomponent_64; G=() ;;
            mc8_1m) d=multicomponent_8; G=("${M[@]}") ;;
            ow_1m) d=quarter_five_spot_60x60x20; G=("${Q[@]}") ;;
          esac
          for v in def ilu; do
            V=(); [[ $v == ilu ]] && V=("${ILU[@]}")
            run_case second2_${c}_${v}_$k "^time:" $d "${G[@]}" "${V[@]}"
          done
        done
      done ;;
    crossover)  # the default's second stage against block-Jacobi between the shipped decks and 1M cells
      for g in ow:100:100:25:30 ow:140:140:25:30 mc3:50:50:50:2 mc3:70:70:70:2 mc8:50:50:50:2 mc8:70:70:70:2 \
               mc8:30:30:30:10; do
        IFS=: read -r m nx ny nz days <<< "$g"
        case $m in
          ow) d=quarter_five_spot_60x60x20; ex=(--set grid.dx=$((300 / nx)) --set grid.dy=$((300 / ny)) --set grid.dz=0.8) ;;
          mc3) d=multicomponent_3; ex=(--set schedule.dt_max=1) ;;
          mc8) d=multicomponent_8; ex=(--set schedule.dt_max=1) ;;
        esac
        for v in def bj; do
          st=(); [[ $v == bj ]] && st=(--set "$P.second={type=\"block_jacobi\"}" --set $P.pressure.cycle=v)
          $X run inputs/$d.toml --backend cuda --set output.vtk=false --output /tmp/runs/x --set grid.nx=$nx --set grid.ny=$ny \
            --set grid.nz=$nz --set wells.PROD.i=$nx --set wells.PROD.j=$ny --set schedule.end_time=$days \
            --set schedule.report_interval=$days "${ex[@]}" "${st[@]}" > $L/cross_${m}_${nx}x${ny}x${nz}_$v.log 2>&1
          echo "== $m ${nx}x${ny}x${nz} ${days} d second=$v rc $?"; grep -E "^done|^time|preconditioner parts" $L/cross_${m}_${nx}x${ny}x${nz}_$v.log
        done
      done ;;
    cpr)  # CPR applications per Newton iteration at OPM's linear reduction and at 1e-4 (CPR_SETS: extra --set lists)
      for d in quarter_five_spot quarter_five_spot_60x60x20; do
        for tol in 5e-3 1e-4; do
          $X run inputs/$d.toml --backend cuda --output /tmp/runs/cpr --set output.vtk=false \
            --set solver.linear.tolerance=$tol ${CPR_SETS:-} > $L/cpr_${d}_$tol.log 2>&1
          echo "== $d tol $tol rc $?"; summary $L/cpr_${d}_$tol.log
        done
      done ;;
    cprq)  # verification/cpr_quality.sh on this GPU (CPRQ_SET: qfs|mc|all; CPRQ_CONFIGS: names, default every one)
      # shellcheck disable=SC2086
      OUT=/tmp/cprq TOLS=${TOLS:-5e-3 1e-4} verification/cpr_quality.sh $X cuda ${CPRQ_SET:-qfs} ${CPRQ_CONFIGS:-} \
        > $L/cprq_${CPRQ_SET:-qfs}.txt 2>&1; echo "== cpr_quality ${CPRQ_SET:-qfs} rc $?"; cat $L/cprq_${CPRQ_SET:-qfs}.txt ;;
    writer)  # issue 30 item 3: the background writer on and off, shipped mc32/mc64 and the 60x60x20 deck, process wall
      for d in multicomponent_32 multicomponent_64 quarter_five_spot_60x60x20; do
        for b in true false; do
          /usr/bin/time -f "process wall %e s" $X run inputs/$d.toml --backend cuda --output /tmp/runs/w \
            --set output.vtk=false --set output.background_writer=$b > $L/writer_${d}_$b.log 2>&1
          echo "== $d background_writer=$b rc $?"; grep -E "^time|process wall" $L/writer_${d}_$b.log | sed 's/.*start-up/start-up/'
        done
      done ;;
    reuse)  # issue 30 item 2: AMG refresh_growth 0 / 0.3 on the 60x60x20 deck and its 1M-cell variant (setup, iterations)
      Q=(--set grid.nx=200 --set grid.ny=200 --set grid.nz=25 --set grid.dx=1.5 --set grid.dy=1.5 --set grid.dz=0.8
         --set wells.PROD.i=200 --set wells.PROD.j=200 --set schedule.end_time=30 --set schedule.report_interval=30)
      for g in 0 0.3; do
        $X run inputs/quarter_five_spot_60x60x20.toml --backend cuda --output /tmp/runs/r --set output.vtk=false \
          --set $P.pressure.refresh_growth=$g > $L/reuse_60_$g.log 2>&1
        echo "== 60x60x20 refresh_growth=$g rc $?"; grep -E "^done|^time|preconditioner parts" $L/reuse_60_$g.log
        $X run inputs/quarter_five_spot_60x60x20.toml --backend cuda --output /tmp/runs/r --set output.vtk=false "${Q[@]}" \
          --set $P.pressure.refresh_growth=$g > $L/reuse_1m_$g.log 2>&1
        echo "== 1M refresh_growth=$g rc $?"; grep -E "^done|^time|preconditioner parts" $L/reuse_1m_$g.log
      done ;;
    probe)  # issue 30 item 1: where a linear iteration's time goes on the 60x60x20 deck (and at 1M cells): the default,
            # V-cycle instead of W, block-Jacobi second stage, no CPR (block ILU(0)/ISAI alone); PROBE_SETS: extra --set
      Q=(--set grid.nx=200 --set grid.ny=200 --set grid.nz=25 --set grid.dx=1.5 --set grid.dy=1.5 --set grid.dz=0.8
         --set wells.PROD.i=200 --set wells.PROD.j=200 --set schedule.end_time=30 --set schedule.report_interval=30)
      for v in def vcyc bj; do
        case $v in
          def) st=() ;;
          vcyc) st=(--set $P.pressure.cycle=v) ;;
          bj) st=(--set "$P.second={type=\"block_jacobi\"}") ;;
        esac
        for g in 60 1m; do
          G=(); [[ $g == 1m ]] && G=("${Q[@]}")
          $X run inputs/quarter_five_spot_60x60x20.toml --backend cuda --output /tmp/runs/p --set output.vtk=false \
            "${G[@]}" "${st[@]}" ${PROBE_SETS:-} > $L/probe_${g}_$v.log 2>&1
          echo "== probe $g $v rc $?"; grep -E "^done|^time|preconditioner parts" $L/probe_${g}_$v.log
        done
      done ;;
    graph)  # issue 30 item 1: the CPR application as one CUDA graph (graph = true, the default) or launched kernel by
            # kernel, the 60x60x20 deck and its 1M variant, alternated GRAPH_REPS times; then issue 29 item 3: one or
            # two W-cycles per application at 5e-3 on the 60x60x20 deck with the graph
      Q=(--set grid.nx=200 --set grid.ny=200 --set grid.nz=25 --set grid.dx=1.5 --set grid.dy=1.5 --set grid.dz=0.8
         --set wells.PROD.i=200 --set wells.PROD.j=200 --set schedule.end_time=30 --set schedule.report_interval=30)
      for k in $(seq 1 ${GRAPH_REPS:-2}); do
        for g in 60 1m; do
          for v in true false; do
            G=(); [[ $g == 1m ]] && G=("${Q[@]}")
            $X run inputs/quarter_five_spot_60x60x20.toml --backend cuda --output /tmp/runs/g --set output.vtk=false \
              "${G[@]}" --set $P.graph=$v > $L/graph_${g}_${v}_$k.log 2>&1
            echo "== $g graph=$v run $k rc $?"; grep -E "^done|^time|preconditioner parts" $L/graph_${g}_${v}_$k.log
          done
        done
      done
      for k in $(seq 1 ${GRAPH_REPS:-2}); do
        for c in 1 2; do
          $X run inputs/quarter_five_spot_60x60x20.toml --backend cuda --output /tmp/runs/g --set output.vtk=false \
            --set solver.linear.tolerance=5e-3 --set $P.pressure.cycles=$c > $L/graph_c${c}_$k.log 2>&1
          echo "== 5e-3 pressure.cycles=$c run $k rc $?"; grep -E "^time|preconditioner appl" $L/graph_c${c}_$k.log
        done
      done ;;
    bytes)  # issue 30: time per linear iteration against the bytes it moves at the copy bandwidth (the run log's
            # `linear iteration:` line), oil-water at 72k, 1M and 4M cells and the shipped multicomponent decks nc 8..64
      for g in 72k 1m 4m; do
        case $g in
          72k) G=() ;;
          1m) G=(--set grid.nx=200 --set grid.ny=200 --set grid.nz=25 --set grid.dx=1.5 --set grid.dy=1.5 --set grid.dz=0.8
                 --set wells.PROD.i=200 --set wells.PROD.j=200 --set schedule.end_time=30 --set schedule.report_interval=30) ;;
          4m) G=(--set grid.nx=400 --set grid.ny=400 --set grid.nz=25 --set grid.dx=0.75 --set grid.dy=0.75 --set grid.dz=0.8
                 --set wells.PROD.i=400 --set wells.PROD.j=400 --set schedule.end_time=5 --set schedule.report_interval=5) ;;
        esac
        $X run inputs/quarter_five_spot_60x60x20.toml --backend cuda --output /tmp/runs/b --set output.vtk=false "${G[@]}" \
          > $L/bytes_ow_$g.log 2>&1
        echo "== oil-water $g rc $?"; grep -E "^done|^time|^linear iteration|^linear:" $L/bytes_ow_$g.log
      done
      for d in multicomponent_8 multicomponent_16 multicomponent_32 multicomponent_64; do
        $X run inputs/$d.toml --backend cuda --output /tmp/runs/b --set output.vtk=false > $L/bytes_$d.log 2>&1
        echo "== $d rc $?"; grep -E "^done|^time|^linear iteration|^linear:" $L/bytes_$d.log
      done
      if [[ -n ${BYTES_MC1M:-} ]]; then  # nc 8 and 16 at 1M cells (100^3, 2 days)
        for d in multicomponent_8 multicomponent_16; do
          $X run inputs/$d.toml --backend cuda --output /tmp/runs/b --set output.vtk=false --set grid.nx=100 \
            --set grid.ny=100 --set grid.nz=100 --set wells.PROD.i=100 --set wells.PROD.j=100 --set schedule.end_time=2 \
            --set schedule.report_interval=2 --set schedule.dt_max=1 > $L/bytes_${d}_1m.log 2>&1
          echo "== $d at 1M cells rc $?"; grep -E "^done|^time|^linear iteration|^linear:|parts" $L/bytes_${d}_1m.log
        done
      fi ;;
    asmprof)  # issue 30 item 2b: ncu of the oil-water assembly kernels at 72k and 1M cells (bench model's assemblies)
      for g in 72k 1m; do
        G=(); [[ $g == 1m ]] && G=(--set grid.nx=200 --set grid.ny=200 --set grid.nz=25 --set grid.dx=1.5 --set grid.dy=1.5
          --set grid.dz=0.8 --set wells.PROD.i=200 --set wells.PROD.j=200)
        $X bench model inputs/quarter_five_spot_60x60x20.toml "${G[@]}" --preconditioners deck --newton 1 --reps 5 \
          --json $L/asm_$g.json > $L/asm_$g.txt 2>&1; echo "== bench model $g rc $?"; grep -E "assembly" $L/asm_$g.txt | head -3
        ncu --clock-control none -k regex:"assemble|face_props|prepare_wells" -c 4 --section SpeedOfLight --section Occupancy \
          --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats \
          $X bench model inputs/quarter_five_spot_60x60x20.toml "${G[@]}" --preconditioners deck --newton 1 --reps 3 \
          --warmup 0 --json /tmp/asm_ncu.json > $L/asm_ncu_$g.txt 2>&1; echo "== ncu $g rc $?"
        grep -E "^  [a-z_]+kernel|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Memory Throughput|DRAM Throughput|Compute \(SM\)" $L/asm_ncu_$g.txt | head -40
      done ;;
    mixed)  # issue 30: fp32 storage (AMG levels, block-Jacobi inverses) and dcgs2 against the defaults, two runs
            # each: the 60x60x20 deck, its 1M-cell variant, multicomponent_16 and _32 as shipped (linear iterations,
            # bytes and time per linear iteration, run total)
      for g in 72k 1m mc16 mc32; do
        d=quarter_five_spot_60x60x20; G=()
        case $g in
          1m) G=(--set grid.nx=200 --set grid.ny=200 --set grid.nz=25 --set grid.dx=1.5 --set grid.dy=1.5 --set grid.dz=0.8
                 --set wells.PROD.i=200 --set wells.PROD.j=200 --set schedule.end_time=30 --set schedule.report_interval=30) ;;
          mc16) d=multicomponent_16 ;;
          mc32) d=multicomponent_32 ;;
        esac
        for v in def amg32 bj32 dcgs2 all; do
          case $v in
            def) V=() ;;
            amg32) V=(--set $P.pressure.storage=fp32) ;;
            bj32) V=(--set $P.second.storage=fp32) ;;
            dcgs2) V=(--set solver.linear.orthogonalization=dcgs2) ;;
            all) V=(--set $P.pressure.storage=fp32 --set solver.linear.orthogonalization=dcgs2) ;;
          esac
          # the default's second stage: block ILU(0)/ISAI on the 72k deck (no fp32 form yet), block-Jacobi on the others
          [[ $v == bj32 && $g == 72k ]] && continue
          [[ $v == all && $g != 72k ]] && V+=(--set $P.second.storage=fp32)
          for k in 1 2; do
            $X run inputs/$d.toml --backend cuda --output /tmp/runs/mx --set output.vtk=false "${G[@]}" "${V[@]}" \
              > $L/mixed_${g}_${v}_$k.log 2>&1
            echo "== $g $v #$k rc $? $(grep -E '^done' $L/mixed_${g}_${v}_$k.log | cut -c1-90)"
            grep -E "^time:|^linear iteration" $L/mixed_${g}_${v}_$k.log | cut -c1-190
          done
        done
      done
      for st in fp64 fp32; do  # the AMG alone: V-cycle time and fraction of the copy bandwidth, fp64 and fp32 storage
        $X bench amg --backend cuda --sizes 100,200 --matrices poisson,lognormal1 --no-hypre --storage $st \
          --json $L/bench_amg_$st.json > $L/bench_amg_$st.txt 2>&1
        echo "== bench amg --storage $st rc $?"; grep -E "V-cycle|AMG-cg" $L/bench_amg_$st.txt | head -8
      done ;;
    sweep)  # issue 30: preconditioner knobs against the default on the 60x60x20 deck (72k) and its 1M variant, two runs
            # each: ISAI sweeps 2 and 1, a 512-row coarse level, AMG hierarchy reuse (refresh_growth 0.3), and at 1M
            # the reuse with fp32 storage and DCGS2
      for g in 72k 1m; do
        G=(); [[ $g == 1m ]] && G=(--set grid.nx=200 --set grid.ny=200 --set grid.nz=25 --set grid.dx=1.5 --set grid.dy=1.5
          --set grid.dz=0.8 --set wells.PROD.i=200 --set wells.PROD.j=200 --set schedule.end_time=30
          --set schedule.report_interval=30)
        vs="def s2 s1 mc512 rg03 rg03all"; [[ $g == 1m ]] && vs="def rg03 rg03all mc512"
        for v in $vs; do
          case $v in
            def) V=() ;;
            s2) V=(--set $P.second.sweeps=2) ;;
            s1) V=(--set $P.second.sweeps=1) ;;
            mc512) V=(--set $P.pressure.max_coarse=512) ;;
            rg03) V=(--set $P.pressure.refresh_growth=0.3) ;;
            rg03all) V=(--set $P.pressure.refresh_growth=0.3 --set $P.pressure.storage=fp32
                        --set solver.linear.orthogonalization=dcgs2) ;;
          esac
          [[ $v == rg03all && $g == 1m ]] && V+=(--set $P.second.storage=fp32)
          for k in 1 2; do
            $X run inputs/quarter_five_spot_60x60x20.toml --backend cuda --output /tmp/runs/sw --set output.vtk=false \
              "${G[@]}" "${V[@]}" > $L/sweep_${g}_${v}_$k.log 2>&1
            echo "== sweep $g $v #$k rc $? $(grep -E '^done' $L/sweep_${g}_${v}_$k.log | cut -c1-90)"
            grep -E "^time:|^linear iteration" $L/sweep_${g}_${v}_$k.log | cut -c1-190
          done
        done
      done ;;
    bsrprof)  # issue 29 item 1: ncu of the rule's BSRMV kernel (speed of light: DRAM, L2, L1 throughput) at the
              # stencil:bs pairs in BSRPROF (default: four of the H200's misses and two passing rows)
      for sb in ${BSRPROF:-27:1 27:3 27:21 7:26 27:16 7:16}; do
        st=${sb%%:*}; b=${sb##*:}
        ncu --clock-control none -k regex:"(wide|slice|staged|small)_kernel" --launch-skip 3 -c 1 --section SpeedOfLight \
          --section MemoryWorkloadAnalysis --section Occupancy \
          $X bench bsrmv --tuning-cache none --bs $b --stencils $st --size-gb 1 --reps 4 --warmup 1 \
          > $L/bsrprof_${st}_$b.txt 2>&1; echo "== ncu stencil $st bs $b rc $?"
        grep -E "_kernel|Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Memory Throughput|L2 Hit Rate|Mem Busy|Max Bandwidth|Achieved Occupancy" \
          $L/bsrprof_${st}_$b.txt | head -14
      done ;;
    l2sol)  # issue 29 item 1 (verification/results/issue29_s39_*): the built-in rule at every bs 1-64 on both stencils,
            # then ncu's speed of light of the rule's kernel at every pair below 85% of the read ceiling (L2SOL_MAX pairs
            # at most, default all; about 15 s each), one table line per pair as it is measured ($L/l2table.txt)
      $X bench bsrmv --tuning-cache none --bs $(seq -s, 1 64) --stencils 7,27 --size-gb 1 --reps 10 --warmup 2 \
        --json $L/l2sol_rule.json > $L/l2sol_rule.txt 2>&1; echo "== rule rc $?"; grep -E "read-only" $L/l2sol_rule.txt
      awk '$1 ~ /^stencil(7|27)$/ && $8+0 < 85 {sub("stencil", "", $1); print $1, $2, $8}' $L/l2sol_rule.txt |
        head -n ${L2SOL_MAX:-128} > $L/l2sol_misses.txt
      echo "pairs below 85% of the read ceiling: $(wc -l < $L/l2sol_misses.txt)"
      while read -r st b pr; do
        ncu --clock-control none -k regex:"(wide|slice|staged|small)_kernel" --launch-skip 3 -c 1 --section SpeedOfLight \
          $X bench bsrmv --tuning-cache none --bs $b --stencils $st --size-gb 1 --reps 4 --warmup 1 > $L/l2sol_${st}_$b.txt 2>&1
        sol() { grep -E "^ +$1 " $L/l2sol_${st}_$b.txt | awk '{print $NF}' | head -1; }
        k=$(grep -m1 -oE '(wide|slice|staged|small)_kernel' $L/l2sol_${st}_$b.txt)
        echo "$st $b read $pr DRAM $(sol 'DRAM Throughput') L2 $(sol 'L2 Cache Throughput') L1 $(sol 'L1/TEX Cache Throughput') $k" \
          | tee -a $L/l2table.txt
      done < $L/l2sol_misses.txt ;;
    bsrmem)  # issue 29 item 1, next step after bsrprof: where the staged kernel's L2 traffic comes from (the x gathers
             # through L1, or the cp.async staging of values and columns), at the stencil:bs pairs in BSRMEM
             # (default: two misses and a passing row); the memory tables, then raw counters
      for sb in ${BSRMEM:-27:3 27:21 7:16}; do
        st=${sb%%:*}; b=${sb##*:}
        B1=(bench bsrmv --tuning-cache none --bs $b --stencils $st --size-gb 1 --reps 4 --warmup 1)
        ncu --clock-control none -k regex:"(wide|slice|staged|small)_kernel" --launch-skip 3 -c 1 \
          --section MemoryWorkloadAnalysis_Tables $X "${B1[@]}" > $L/bsrmem_tables_${st}_$b.txt 2>&1
        echo "== ncu tables stencil $st bs $b rc $?"
        ncu --clock-control none -k regex:"(wide|slice|staged|small)_kernel" --launch-skip 3 -c 1 --metrics \
dram__bytes_read.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_read_lookup_hit.sum,lts__t_requests_srcunit_tex_op_read.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,\
smsp__inst_executed_op_ldgsts.sum,l1tex__m_xbar2l1tex_read_bytes.sum,launch__shared_mem_per_block_static,\
launch__occupancy_limit_shared_mem,sm__warps_active.avg.pct_of_peak_sustained_active \
          $X "${B1[@]}" > $L/bsrmem_metrics_${st}_$b.txt 2>&1
        echo "== ncu metrics stencil $st bs $b rc $?"
        grep -E "_kernel|dram__|lts__|l1tex__|smsp__|launch__|sm__|ERR" $L/bsrmem_metrics_${st}_$b.txt | head -16
      done ;;
    kprof)  # issue 30: where the 72k run's GPU time goes kernel by kernel (ncu gpu__time_duration of every kernel of a
            # 3-day 60x60x20 run, graph nodes one by one), and the CUDA back end's start-up parts (verification/probes/cuda_startup.cu)
      nvcc -O2 -o /tmp/ctx verification/probes/cuda_startup.cu -lcublas > $L/ctx_build.log 2>&1 && { /tmp/ctx; /tmp/ctx; } > $L/ctx.txt 2>&1
      cat $L/ctx.txt
      ncu --csv --print-units base --metrics gpu__time_duration.sum -c ${KPROF_COUNT:-4000} \
        $X run inputs/quarter_five_spot_60x60x20.toml --backend cuda --output /tmp/runs/kp --set output.vtk=false \
        --set schedule.end_time=${KPROF_DAYS:-3} --set schedule.report_interval=${KPROF_DAYS:-3} > $L/kprof.csv 2> $L/kprof.err
      echo "== kprof rc $? $(grep -c gpu__time_duration $L/kprof.csv) kernels"; grep -E "^done|^time" $L/kprof.csv | head -3 ;;
    isaisub)  # issue 31 item 4: the block ISAI of block ILU(0) factors by block substitution: bench model's setup
              # per Newton iteration with block ILU(0) exact (bilu0: the factorisation alone) and with the ISAI
              # (bilu0_isai: factorisation + generation) at nc 16 / 1M cells and nc 32, 64 / 100k; then the runs whose
              # default second stage it is (60x60x20 twice, multicomponent_8)
      M=(--set grid.nx=100 --set grid.ny=100 --set grid.nz=100 --set wells.PROD.i=100 --set wells.PROD.j=100)
      for spec in "nc16_1M multicomponent_16 1" "nc32_100k multicomponent_32 0" "nc64_100k multicomponent_64 0"; do
        read -r n d big <<< "$spec"
        G=(); [[ $big == 1 ]] && G=("${M[@]}")
        $X bench model inputs/$d.toml --preconditioners ${ISAISUB_PCS:-bilu0,bilu0_isai} --json $L/isaisub_$n.json \
          "${G[@]}" --set solver.linear.max_iterations=500 > $L/isaisub_$n.txt 2>&1
        echo "== isaisub $n rc $?"; grep -E "^  [a-z_0-9]+ +(ilu0|block|error)|newton [0-9]" $L/isaisub_$n.txt | cut -c1-200
      done
      for k in 1 2; do run_case isaisub_72k_$k "^time:|preconditioner parts" quarter_five_spot_60x60x20; done
      run_case isaisub_mc8 "^time:|preconditioner parts" multicomponent_8 ;;
    lat72)  # issue 30, the 72k run (60x60x20 deck, target 1.0 s): the default against shorter CPR applications (fewer
            # graph nodes, more iterations): the V-cycle, 2 ISAI sweeps, both; two runs each, alternated
      for k in 1 2; do
        for v in def v s2 v_s2; do
          case $v in
            def) V=() ;;
            v) V=(--set $P.pressure.cycle=v) ;;
            s2) V=(--set $P.second.sweeps=2) ;;
            v_s2) V=(--set $P.pressure.cycle=v --set $P.second.sweeps=2) ;;
          esac
          $X run inputs/quarter_five_spot_60x60x20.toml --backend cuda --output /tmp/runs/l72 --set output.vtk=false \
            "${V[@]}" > $L/lat72_${v}_$k.log 2>&1
          echo "== lat72 $v #$k rc $? $(grep -E '^done' $L/lat72_${v}_$k.log | cut -c7-100)"
          grep -E "^time:|preconditioner parts" $L/lat72_${v}_$k.log | cut -c1-260
        done
      done ;;
    floor)  # issue 30 item 1: the latency floor of dependent GPU work (verification/probes/graph_chain.cu): time per node
            # of a CUDA graph chain of small kernels, plain and with programmatic dependent launch, and per grid barrier;
            # a chain of small SpMVs plain, with PDL and with the matrix prefetched before the wait (spmv_chain.cu)
      nvcc -std=c++17 -O3 -arch=sm_90 -o /tmp/gc verification/probes/graph_chain.cu > $L/floor_build.log 2>&1 &&
        /tmp/gc > $L/floor.txt 2>&1; echo "== floor rc $?"; cat $L/floor.txt
      nvcc -std=c++17 -O3 -arch=sm_90 -o /tmp/sc verification/probes/spmv_chain.cu > $L/floor_build2.log 2>&1 &&
        /tmp/sc > $L/floor_spmv.txt 2>&1; echo "== spmv chain rc $?"; cat $L/floor_spmv.txt ;;
    cyc2)  # issue 29 item 3: the default CPR (one W-cycle per application) against two W-cycles (pressure.cycles = 2),
           # 60x60x20 deck (72k) and its 200x200x25 variant (1M, 30 days), two runs each, alternated
      Q=(--set grid.nx=200 --set grid.ny=200 --set grid.nz=25 --set grid.dx=1.5 --set grid.dy=1.5 --set grid.dz=0.8
         --set wells.PROD.i=200 --set wells.PROD.j=200 --set schedule.end_time=30 --set schedule.report_interval=30)
      for k in 1 2; do
        for c in 1 2; do
          for g in 72k 1m; do
            G=(); [[ $g == 1m ]] && G=("${Q[@]}")
            $X run inputs/quarter_five_spot_60x60x20.toml --backend cuda --output /tmp/runs/c2 --set output.vtk=false \
              --set solver.linear.tolerance=5e-3 --set $P.pressure.cycles=$c "${G[@]}" > $L/cyc2_${g}_c${c}_$k.log 2>&1
            echo "== $g cycles=$c #$k rc $? $(grep -E '^done' $L/cyc2_${g}_c${c}_$k.log | cut -c7-100)"
            grep -E "^time:|preconditioner applications" $L/cyc2_${g}_c${c}_$k.log | cut -c1-220
          done
        done
      done ;;
    omega)  # issue 29 item 3 / issue 30: the CPR pressure AMG's Jacobi damping (OMEGAS, default "0.6666666666666666
            # 0.9") on the 60x60x20 deck and its 1M-cell variant, two runs each, alternated
      Q=(--set grid.nx=200 --set grid.ny=200 --set grid.nz=25 --set grid.dx=1.5 --set grid.dy=1.5 --set grid.dz=0.8
         --set wells.PROD.i=200 --set wells.PROD.j=200 --set schedule.end_time=30 --set schedule.report_interval=30)
      for k in 1 2; do
        for w in ${OMEGAS:-0.6666666666666666 0.9}; do
          for g in 60 1m; do
            G=(); [[ $g == 1m ]] && G=("${Q[@]}")
            $X run inputs/quarter_five_spot_60x60x20.toml --backend cuda --output /tmp/runs/o --set output.vtk=false \
              "${G[@]}" --set $P.pressure.jacobi_omega=$w > $L/omega_${g}_${w}_$k.log 2>&1
            echo "== omega $g $w #$k rc $? $(grep -E '^done' $L/omega_${g}_${w}_$k.log | cut -c7-90)"
            grep -E "^time:" $L/omega_${g}_${w}_$k.log | cut -c1-200
          done
        done
      done ;;
    ilu32)  # issue 30: block ILU(0)/ISAI in fp32 storage against fp64 where it is the default second stage (the
            # 60x60x20 deck, multicomponent_8 as shipped), two runs each
      for d in quarter_five_spot_60x60x20 multicomponent_8; do
        for v in fp64 fp32; do
          for k in 1 2; do
            $X run inputs/$d.toml --backend cuda --output /tmp/runs/i32 --set output.vtk=false \
              --set $P.second.storage=$v > $L/ilu32_${d}_${v}_$k.log 2>&1
            echo "== $d second.storage=$v #$k rc $? $(grep -E '^done' $L/ilu32_${d}_${v}_$k.log | cut -c1-90)"
            grep -E "^time:|^linear iteration|parts" $L/ilu32_${d}_${v}_$k.log | cut -c1-220
          done
        done
      done ;;
    ab)  # A/B in one session: `bench bsrmv` (rule, AB_BS block sizes) on the tree in .gpu-carry/ab_src.tgz (git archive
         # of AB_REF) and on this one, alternated twice
      rm -rf /tmp/absrc && mkdir -p /tmp/absrc/.gpu-carry/provenance && tar xzf .gpu-carry/ab_src.tgz -C /tmp/absrc
      cp -r .gpu-carry/include /tmp/absrc/.gpu-carry/ && echo "${AB_REF:-ref}" > /tmp/absrc/.gpu-carry/provenance/commit
      : > /tmp/absrc/.gpu-carry/provenance/tree.diff
      (cd /tmp/absrc && B=/tmp/ab-build TARGETS=blockres OUT=$L/ab verification/h200_amg.sh none > $L/ab_setup.log 2>&1)
      echo "== A/B reference build: $(tail -1 $L/ab_setup.log)"
      for k in 1 2; do
        for t in ref this; do
          x=$X; [[ $t == ref ]] && x=/tmp/ab-build/miniapp/blockres
          $x bench bsrmv --tuning-cache none --bs ${AB_BS:-1,2,3} --stencils 7,27 --size-gb 1 --reps 10 --warmup 2 \
            > $L/ab_${t}_$k.txt 2>&1; echo "== ab $t $k rc $?"
          grep -E "^stencil" $L/ab_${t}_$k.txt | awk '{printf "%s %s %s | ", $1, $2, $8}'; echo
        done
      done ;;
    abref)  # build every reference tree in .gpu-carry/ab_src*.tgz (git archives; names in .gpu-carry/ab_names, one a
            # line): the blockres target; their binaries listed in $L/ab_bins (one line, space-separated)
      refs=(); i=0
      for t in .gpu-carry/ab_src*.tgz; do
        i=$((i + 1)); d=/tmp/absrc$i; rm -rf $d && mkdir -p $d/.gpu-carry/provenance && tar xzf $t -C $d
        cp -r .gpu-carry/include $d/.gpu-carry/ && sed -n "${i}p" .gpu-carry/ab_names > $d/.gpu-carry/provenance/commit
        : > $d/.gpu-carry/provenance/tree.diff
        (cd $d && B=/tmp/ab-build$i TARGETS=blockres OUT=$L/ab$i verification/h200_amg.sh none > $L/ab${i}_setup.log 2>&1)
        echo "== A/B reference $i ($(cat $d/.gpu-carry/provenance/commit)) build: $(tail -1 $L/ab${i}_setup.log)"
        refs+=(/tmp/ab-build$i/miniapp/blockres)
      done
      echo "${refs[*]}" > $L/ab_bins ;;
    abasm)  # A/B of the oil-water assembly in one session: the reference trees (abref), then abasm_run
      verification/issue29_gpu.sh abref && AB_BINS="$(cat $L/ab_bins)" verification/issue29_gpu.sh abasm_run ;;
    abasm_run)  # the assembly A/B alone: `bench model` (72k, 1M) on every binary of AB_BINS (space-separated) and on
                # this tree's, alternated, two rounds
      refs=(${AB_BINS:-})
      for k in 1 2; do
        for g in 72k 1m; do
          G=(); [[ $g == 1m ]] && G=(--set grid.nx=200 --set grid.ny=200 --set grid.nz=25 --set grid.dx=1.5 --set grid.dy=1.5
            --set grid.dz=0.8 --set wells.PROD.i=200 --set wells.PROD.j=200)
          j=0
          for x in "${refs[@]}" $X; do
            j=$((j + 1))
            $x bench model inputs/quarter_five_spot_60x60x20.toml "${G[@]}" --preconditioners deck --newton 1 --reps 10 \
              > $L/abasm_${g}_${j}_$k.txt 2>&1
            echo "== abasm $g tree $j round $k rc $? | $(grep -E "^assembly:" $L/abasm_${g}_${j}_$k.txt | head -1)"
          done
        done
      done ;;
    jac64)  # bench bsrmv on the nc 64 deck's own Jacobian: a baseline that cannot hold it is skipped, ours still runs
      $X run inputs/multicomponent_64.toml --backend cuda --output /tmp/runs/j64 --set output.vtk=false \
        --write-jacobian /tmp/j64.h5 > $L/jac64_run.log 2>&1; echo "== write jacobian rc $?"
      $X bench bsrmv --bs 64 --stencils 7 --size-gb 0.2 --jacobian /tmp/j64.h5 --json $L/bsrmv_jac64.json \
        > $L/bsrmv_jac64.txt 2>&1; echo "== bench bsrmv --jacobian nc64 rc $?"; grep -iE "skip|jacobian|report" $L/bsrmv_jac64.txt | head ;;
  esac
done
tag=$(echo "$@" | tr ' ' '_')
tar czf $OUT/logs_$tag.tgz -C $L . 2>/dev/null
