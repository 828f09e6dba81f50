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
{
  echo "perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)"
  LD_LIBRARY_PATH="$PERFDIR/lib" "$PERF" --version
  for s in $SETTINGS; do
    echo; echo "=================== $s ($WORKLOAD, perf over ${SECONDS_EACH} s of steps)"
    rm -f "$TMP/ready"
    ${PIN:-taskset -c 2-9} "$PY" benchmarks/gpu_steady.py --setting "$s" --workload "$WORKLOAD" \
      --seconds "$((SECONDS_EACH + 2))" --ready "$TMP/ready" > "$TMP/steady.log" 2>&1 &
    pid=$!
    for _ in $(seq 600); do [ -e "$TMP/ready" ] || ! kill -0 $pid 2>/dev/null && break; sleep 0.1; done
    LD_LIBRARY_PATH="$PERFDIR/lib" "$PERF" record -F 1999 -p $pid -o "$TMP/$s.data" -- sleep "$SECONDS_EACH" \
      > /dev/null 2>&1
    wait $pid
    grep -v Warning "$TMP/steady.log" | tail -2
    for sort in pid pid,dso; do
      echo "--- samples by $sort"
      LD_LIBRARY_PATH="$PERFDIR/lib" "$PERF" report -i "$TMP/$s.data" --no-children -n --sort $sort \
        --stdio --percent-limit 0.3 2>/dev/null | grep -v "^#" | grep -v "^$" | head -40
    done
    echo "--- functions (>= 0.3 %)"
    LD_LIBRARY_PATH="$PERFDIR/lib" "$PERF" report -i "$TMP/$s.data" --no-children -n --sort pid,dso,sym \
      --stdio --percent-limit 0.3 2>/dev/null | grep -v "^#" | grep -v "^$" | cut -c1-170 | head -90
    rm -f "$TMP/$s.data"
  done
} > "$OUTFILE" 2>&1
rm -rf "$TMP"
