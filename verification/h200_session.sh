#!/usr/bin/env bash
# One GPU-machine session (device tool): build with CUDA for sm_90, run every test (the
# `gpu` label included) and time the shipped decks on both backends. Logs go to $OUT.
# Needs the header-only dependencies the H200 image lacks, carried in .gpu-carry/include:
#   mkdir -p .gpu-carry/include && cp -r /usr/include/toml++ /usr/include/CLI /usr/include/nlohmann .gpu-carry/include/
# Usage there: verification/h200_session.sh [tests|decks|verify|all|bench|isai|solver]   (default: all; bench,
# isai and solver are not part of all. bench: `bench batched` over every size plus its block-Jacobi
# section on the Jacobians of both shipped quarter five-spot decks, ~2.5 min. isai: `bench isai` on the
# 7-point stencils bs 1/2/4/8 and the same Jacobians. solver: `bench solver` on the 1M-cell 7-point
# stencils bs 1/2/4/8/16 and the same Jacobians, < ~5 min, up to ~90 GB of device memory at bs 16.
# verify: every verification case on the CUDA backend against its CPU baseline, JSON per case.)
set -uo pipefail
OUT=${OUT:-/tmp/blockres-out}
mkdir -p "$OUT"
B=/tmp/blockres-build
what=${1:-all}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DBLOCKRES_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DCMAKE_PREFIX_PATH="$PWD/.gpu-carry" > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
cmake --build $B -j 16 > "$OUT/build.log" 2>&1 || { grep -E "error|Error" "$OUT/build.log" | head -40; exit 1; }
echo "build ok"

if [[ $what == all || $what == tests ]]; then
  ctest --test-dir $B --output-on-failure -j 8 --timeout 900 > "$OUT/ctest.log" 2>&1
  grep -E "tests passed|Skipped|Failed|\*\*\*" "$OUT/ctest.log" | tail -20
  ctest --test-dir $B -L gpu -V > "$OUT/ctest-gpu-verbose.log" 2>&1
  grep -E "CPU vs CUDA|max relative|worst|Passed|Failed|SKIPPED" "$OUT/ctest-gpu-verbose.log" | head -20
fi

if [[ $what == all || $what == decks ]]; then
  for deck in quarter_five_spot quarter_five_spot_60x60x20; do
    for backend in cuda cpu; do
      log="$OUT/${deck}_${backend}.log"
      /usr/bin/time -f "wall %e s, max RSS %M KB" $B/miniapp/blockres run inputs/$deck.toml --backend $backend \
        --output /tmp/blockres-runs/$backend > "$log" 2>&1
      echo "$deck $backend: $(grep -E '^done:' "$log")"
      echo "    $(grep -E '^time:' "$log") | $(tail -1 "$log")"
    done
  done
fi

if [[ $what == all || $what == verify ]]; then
  for case_file in verification/cases/*.toml; do
    c=$(basename "$case_file" .toml)
    args=()
    if [[ ! -f verification/baselines/$c.h5 ]]; then
      # A full-size case whose baseline is not stored (over 5 MB): a CPU run here is the baseline.
      $B/miniapp/blockres run inputs/$c.toml --backend cpu --output /tmp/blockres-baselines --set output.vtk=false \
        > "$OUT/baseline_${c}_cpu.log" 2>&1 || { echo "CPU baseline run of $c failed"; continue; }
      echo "CPU baseline $c: $(grep -E '^(done|time):' "$OUT/baseline_${c}_cpu.log" | tr '\n' ' ')"
      args=(inputs/$c.toml --baseline /tmp/blockres-baselines/$c.h5)
    fi
    /usr/bin/time -f "wall %e s" $B/miniapp/blockres verify "${args[@]}" --case "$case_file" --backend cuda \
      --json "$OUT/verify_${c}_cuda.json" > "$OUT/verify_${c}_cuda.txt" 2>&1
    echo "verify $c (cuda vs cpu baseline): exit $? | $(grep -E '^verify: (PASS|FAIL)' "$OUT/verify_${c}_cuda.txt") | $(tail -1 "$OUT/verify_${c}_cuda.txt")"
  done
fi

if [[ $what == bench || $what == isai || $what == solver ]]; then
  jac=/tmp/blockres-jacobians
  mkdir -p $jac
  args=()
  for deck in quarter_five_spot quarter_five_spot_60x60x20; do
    $B/miniapp/blockres run inputs/$deck.toml --output /tmp/blockres-runs/jac --write-jacobian $jac/$deck.h5 \
      > "$OUT/${deck}_jacobian.log" 2>&1 || { tail -5 "$OUT/${deck}_jacobian.log"; exit 1; }
    args+=(--jacobian $jac/$deck.h5)
  done
  if [[ $what == bench ]]; then
    $B/miniapp/blockres bench batched "${args[@]}" --json "$OUT/bench_batched.json" > "$OUT/bench_batched.txt" 2>&1
    echo "bench batched: exit $?"
  elif [[ $what == isai ]]; then
    $B/miniapp/blockres bench isai "${args[@]}" --json "$OUT/bench_isai.json" > "$OUT/bench_isai.txt" 2>&1
    echo "bench isai: exit $?"
  else
    # Progress lines go to the text file as they come, and the JSON is rewritten after every matrix, so a
    # run cut short by the time limit still leaves what it finished.
    $B/miniapp/blockres bench solver "${args[@]}" --json "$OUT/bench_solver.json" > "$OUT/bench_solver.txt" 2>&1
    echo "bench solver: exit $?"
    grep -A2 "^acceptance" "$OUT/bench_solver.txt"
    tail -1 "$OUT/bench_solver.txt"
  fi
fi
