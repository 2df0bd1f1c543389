#!/usr/bin/env bash
# GPU-machine session for the models (device tool): build with CUDA for sm_90 (once per machine),
# the `gpu` tests, the multicomponent verification cases on CUDA against their CPU baselines, and
# `bench model` on the multicomponent decks at benchmark size. Logs and JSON go to $OUT.
# Needs the header-only dependencies the H200 image lacks, carried in .gpu-carry/include:
#   mkdir -p .gpu-carry/include && cp -r /usr/include/toml++ /usr/include/CLI /usr/include/nlohmann .gpu-carry/include/
# Usage there: verification/h200_models.sh [tests|small|large|all|profile|agree]   (default all; profile: ncu
# kernel times; agree: CPU vs CUDA runs of every multicomponent deck compared by verify)
#   tests  ctest -L gpu (every GPU test and the CUDA runs of every verification case)
#   small  bench model: nc = 3, 8 at 100^3 = 1M cells
#   large  bench model: nc = 16 at 1M cells, nc = 32 and 64 at 50x50x40 = 100k cells (the decks' grid)
set -uo pipefail
OUT=${OUT:-/tmp/blockres-out}
mkdir -p "$OUT"
B=/tmp/blockres-build
what=${1:-all}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"
if [[ ! -x $B/miniapp/blockres ]]; then
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DBLOCKRES_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DCMAKE_PREFIX_PATH="$PWD/.gpu-carry" -DTOMLPP_INCLUDE_DIR="$PWD/.gpu-carry/include" \
        -DCLI11_INCLUDE_DIR="$PWD/.gpu-carry/include" -DNLOHMANN_JSON_INCLUDE_DIR="$PWD/.gpu-carry/include" \
        > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
  /usr/bin/time -f "build wall %e s" cmake --build $B -j 16 > "$OUT/build.log" 2>&1 ||
    { grep -E "error|Error" "$OUT/build.log" | head -40; exit 1; }
  tail -1 "$OUT/build.log"
fi
echo "commit $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (modified tree)')"

if [[ $what == all || $what == tests ]]; then
  ctest --test-dir $B -L gpu -j 4 --timeout 600 --output-on-failure > "$OUT/ctest-gpu.log" 2>&1
  grep -E "tests passed|Failed|\*\*\*|Skipped" "$OUT/ctest-gpu.log" | tail -30
fi

bench() {  # name deck preconditioners extra --set arguments...
  local name=$1 deck=$2 pcs=$3
  shift 3
  /usr/bin/time -f "wall %e s" $B/miniapp/blockres bench model inputs/$deck.toml --preconditioners "$pcs" \
    --json "$OUT/bench_model_$name.json" "$@" > "$OUT/bench_model_$name.txt" 2>&1
  echo "== $name: exit $?"
  grep -E "^assembly|^model|  [a-z_0-9]+ +(ilu0|block|error|none)|newton [0-9]|wall" "$OUT/bench_model_$name.txt"
}
million=(--set grid.nx=100 --set grid.ny=100 --set grid.nz=100 --set wells.PROD.i=100 --set wells.PROD.j=100
         --set solver.linear.max_iterations=500)
small_pcs=${SMALL_PRECONDITIONERS:-deck,bilu0,bilu0_isai,ilu0}
if [[ $what == all || $what == small ]]; then
  bench nc3_1M multicomponent_3 $small_pcs "${million[@]}" --set wells.PROD.j=100
  bench nc8_1M multicomponent_8 $small_pcs "${million[@]}"
fi
if [[ $what == all || $what == large ]]; then
  # bilu0_isai: the block ISAI generation took 40 s (nc 16, 1M cells) to 100 s (nc 64) per setup before the block
  # substitution (9a32187): 0.06-0.5 s on the H200.
  pcs=${LARGE_PRECONDITIONERS:-deck,bilu0,bilu0_isai}
  bench nc16_1M multicomponent_16 $pcs "${million[@]}"
  bench nc32_100k multicomponent_32 $pcs --set solver.linear.max_iterations=500
  bench nc64_100k multicomponent_64 $pcs --set solver.linear.max_iterations=500
fi
if [[ $what == profile ]]; then
  # Kernel times of one assembly (ncu), nc = 3 and 8 at 1M cells and nc = 64 at 100k cells.
  for spec in "3 multicomponent_3" "8 multicomponent_8" "64 multicomponent_64"; do
    set -- $spec
    args=(--preconditioners none --newton 1 --reps 3 --warmup 0 --verify-gb 0 --json /tmp/p.json)
    [[ $1 != 64 ]] && args+=("${million[@]}")
    ncu --metrics gpu__time_duration.sum -k regex:"props|cells|well|reduce|mass" --launch-skip 0 --launch-count 12 \
      $B/miniapp/blockres bench model inputs/$2.toml "${args[@]}" > "$OUT/ncu_nc$1.txt" 2>&1
    echo "== ncu nc$1: exit $?"
    grep -E "^\s+[a-z_]+.*\(|gpu__time_duration" "$OUT/ncu_nc$1.txt" | paste - - | awk '{print $1, $(NF)}' | head -12
  done
fi
if [[ $what == agree ]]; then
  # CPU and CUDA runs of the same deck compared field by field (rel 1e-6, abs 1e-6 in the file's units):
  # the nc = 3, 8, 16 decks as shipped, nc = 32 and 64 shortened (12x12x6 cells, 2 days). With the
  # decks' own tolerances (CNV 1e-3, linear 1e-4) the two backends agree to those tolerances only
  # (other reduction orders), so the runs are converged tightly: what remains is rounding.
  A=/tmp/blockres-agree
  short=(--set grid.nx=12 --set grid.ny=12 --set grid.nz=6 --set wells.PROD.i=12 --set wells.PROD.j=12
         --set schedule.end_time=2 --set schedule.report_interval=1)
  agree() {  # deck extra args...
    local deck=$1
    shift
    for be in cpu cuda; do
      timeout 400 $B/miniapp/blockres run inputs/$deck.toml --backend $be --output $A/$be --set output.vtk=false \
        --set solver.newton.tol_cnv=1e-9 --set solver.newton.tol_mb=1e-12 --set solver.newton.max_iterations=20 \
        --set solver.linear.tolerance=1e-10 --set solver.linear.max_iterations=5000 "$@" \
        > "$OUT/agree_${deck}_$be.log" 2>&1 &
    done
    wait
    $B/miniapp/blockres verify $A/cuda/$deck.h5 --baseline $A/cpu/$deck.h5 --rtol 1e-6 --atol 1e-6 \
      > "$OUT/agree_${deck}.txt" 2>&1
    echo "== agree $deck: exit $? | $(grep -E '^verify:' "$OUT/agree_${deck}.txt") | cpu $(grep -E '^done' "$OUT/agree_${deck}_cpu.log") | cuda $(grep -E '^done' "$OUT/agree_${deck}_cuda.log")"
    grep -E "^time:" "$OUT/agree_${deck}_cpu.log" "$OUT/agree_${deck}_cuda.log" | cut -c1-160
  }
  agree multicomponent_3
  agree multicomponent_8
  agree multicomponent_16
  agree multicomponent_32 "${short[@]}"
  [[ -z ${SKIP64:-} ]] && agree multicomponent_64 "${short[@]}"  # SKIP64=1: its CPU run takes ~3 min
fi
if [[ $what == profile-detail ]]; then
  # ncu sections of the two assembly passes (occupancy, memory throughput, registers), nc = 8 at 1M cells
  # and nc = 64 at 100k cells.
  for spec in "8 multicomponent_8" "64 multicomponent_64"; do
    set -- $spec
    args=(--preconditioners none --newton 1 --reps 3 --warmup 0 --verify-gb 0 --json /tmp/p.json)
    [[ $1 != 64 ]] && args+=("${million[@]}")
    ncu --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
      --section MemoryWorkloadAnalysis -k regex:"props_kernel|cells_" \
      --launch-count 2 $B/miniapp/blockres bench model inputs/$2.toml "${args[@]}" > "$OUT/ncu_detail_nc$1.txt" 2>&1
    echo "== ncu detail nc$1: exit $?"
    grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit Reg|Block Limit Shared|Dynamic Shared|Static Shared|Stall|Warp Cycles|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth" \
      "$OUT/ncu_detail_nc$1.txt" | cut -c1-110
  done
fi
