#!/bin/bash
# Issue 33: one rank of a distributed run stopped from outside. Usage: mpi_stop_rank.sh MPIEXEC BLOCKRES DECK OUTDIR
#   SIGTERM to one rank: every rank stops at the same point of the time loop (exit 143), the checkpoint of the last
#     report is complete (a restart from it on another rank count finishes), no final result is left half-written.
#   SIGKILL of one rank: the launcher ends the others within 30 s; no final result file, no hang.
set -u
MPIEXEC=$1 BLOCKRES=$2 DECK=$3 OUT=$4
rm -rf "$OUT"; mkdir -p "$OUT"
fail() { echo "FAIL: $*"; exit 1; }
SET=(--set output.checkpoint=true --set output.vtk=false --set schedule.dt_max=5)
ranks_of() { pgrep -f -- "--output $1" | while read -r p; do [ "$(ps -o comm= -p "$p")" = blockres ] && echo "$p"; done; }

for sig in TERM KILL; do
  dir=$OUT/$sig
  "$MPIEXEC" -np 2 "$BLOCKRES" run "$DECK" --backend cpu --output "$dir" "${SET[@]}" > "$OUT/$sig.log" 2>&1 &
  launcher=$!
  # Wait for the first checkpoint, then stop one rank (the second one found).
  for _ in $(seq 1 300); do [ -f "$dir"/*.checkpoint.h5 ] 2>/dev/null && break; sleep 0.1; done
  ls "$dir"/*.checkpoint.h5 > /dev/null 2>&1 || fail "$sig: no checkpoint appeared (log: $(tail -3 "$OUT/$sig.log"))"
  mapfile -t pids < <(ranks_of "$dir")
  [ "${#pids[@]}" -eq 2 ] || fail "$sig: expected 2 ranks, found ${#pids[@]}"
  t0=$(date +%s)
  kill -"$sig" "${pids[1]}"
  for _ in $(seq 1 300); do kill -0 "$launcher" 2> /dev/null || break; sleep 0.1; done
  kill -0 "$launcher" 2> /dev/null && { kill -9 "$launcher"; fail "$sig: the run did not end within 30 s"; }
  wait "$launcher"; rc=$?
  echo "$sig: the run ended after $(( $(date +%s) - t0 )) s with exit code $rc"
  [ -n "$(ranks_of "$dir")" ] && fail "$sig: a rank is still running"
  ls "$dir"/*.h5 2> /dev/null | grep -v checkpoint && fail "$sig: a final result file exists after the run was stopped"
  if [ "$sig" = TERM ]; then
    [ "$rc" -eq 143 ] || fail "TERM: exit code $rc, expected 143 (log: $(tail -3 "$OUT/$sig.log"))"
    grep -q "interrupted by SIGTERM" "$OUT/$sig.log" || fail "TERM: no interruption line in the log"
    # The checkpoint is complete: a run on 3 ranks continues from it to the end.
    ck=$(ls "$dir"/*.checkpoint.h5)
    cp "$ck" "$OUT/restart_source.h5"
    "$MPIEXEC" -np 3 "$BLOCKRES" run "$DECK" --backend cpu --output "$OUT/continued" "${SET[@]}" \
      --restart "$OUT/restart_source.h5" > "$OUT/continued.log" 2>&1 || fail "the restart on 3 ranks failed: $(tail -3 "$OUT/continued.log")"
    ls "$OUT"/continued/*.h5 > /dev/null || fail "the restart wrote no result"
  else
    [ "$rc" -ne 0 ] || fail "KILL: the launcher exited 0"
  fi
done
echo "PASS"
