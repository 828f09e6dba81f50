#!/usr/bin/env bash
# Where each tracing setting's CPU goes, by thread, library and function: perf attached to
# benchmarks/gpu_steady.py once it is warm (its set-up and imports left out), for SECONDS of
# training steps, one process per setting. Divide a line's samples by (SECONDS x 1999 Hz) for
# the share of a CPU, by (steps/s x SECONDS) for samples per step.
# On the GPU host, whose image has no perf: carry a perf binary and the libraries it needs
# (`PERF=build/perf-tool/perf`, its libraries in build/perf-tool/lib; glibc of the host or older).
#
#   [PIN="taskset -c 2-9"] PERF=build/perf-tool/perf bash benchmarks/gpu_perf_ladder.sh OUT_FILE \
#       [SETTINGS] [WORKLOAD] [SECONDS]
set -uo pipefail
OUTFILE=$1
SETTINGS=${2:-plain cupti_raw cupti_sys default sys-trace torch.profiler}
WORKLOAD=${3:-transformer}
SECONDS_EACH=${4:-6}
PERF=${PERF:-perf}
PERFDIR=$(cd "$(dirname "$PERF")" && pwd)
PY=${PYTHON:-python3}
TMP=$(mktemp -d)

run_perf() { LD_LIBRARY_PATH="$PERFDIR/lib" "$PERF" "$@"; }

# steady SETTING WORKLOAD SECONDS: the workload stepped SECONDS + 2 in the background (pinned by
# PIN, default CPUs 2-9); returns once it is warm, its pid in STEADY_PID, its output in
# $TMP/steady.log.
steady() {
  rm -f "$TMP/ready"
  ${PIN:-taskset -c 2-9} "$PY" benchmarks/gpu_steady.py --setting "$1" --workload "$2" \
    --seconds "$(($3 + 2))" --ready "$TMP/ready" > "$TMP/steady.log" 2>&1 &
  STEADY_PID=$!
  for _ in $(seq 600); do
    [ -e "$TMP/ready" ] || ! kill -0 "$STEADY_PID" 2>/dev/null && break
    sleep 0.1
  done
}
{
  echo "perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)"
  run_perf --version
  for s in $SETTINGS; do
    echo; echo "=================== $s ($WORKLOAD, perf over ${SECONDS_EACH} s of steps)"
    steady "$s" "$WORKLOAD" "$SECONDS_EACH"
    run_perf record -F 1999 -p "$STEADY_PID" -o "$TMP/$s.data" -- sleep "$SECONDS_EACH" > /dev/null 2>&1
    wait "$STEADY_PID"
    grep -v Warning "$TMP/steady.log" | tail -2
    for sort in pid pid,dso; do
      echo "--- samples by $sort"
      run_perf report -i "$TMP/$s.data" --no-children -n --sort $sort --stdio --percent-limit 0.3 \
        2>/dev/null | grep -v "^#" | grep -v "^$" | head -40
    done
    echo "--- functions (>= 0.3 %)"
    run_perf report -i "$TMP/$s.data" --no-children -n --sort pid,dso,sym --stdio --percent-limit 0.3 \
      2>/dev/null | grep -v "^#" | grep -v "^$" | cut -c1-170 | head -90
    rm -f "$TMP/$s.data"
  done
} > "$OUTFILE" 2>&1
rm -rf "$TMP"
