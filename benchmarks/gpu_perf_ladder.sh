#!/usr/bin/env bash
# Where each tracing setting's CPU goes, by thread, library and function: perf over
# benchmarks/gpu_steady.py, one process per setting, the same seconds of training steps each.
# On the GPU host, whose image has no perf: carry a perf binary and the libraries it needs
# (`PERF=build/perf-tool/perf`, its libraries in build/perf-tool/lib; glibc of the host or older).
#
#   [PIN="taskset -c 2-9"] PERF=build/perf-tool/perf bash benchmarks/gpu_perf_ladder.sh OUT_FILE [SETTINGS] [WORKLOAD] [SECONDS]
set -uo pipefail
OUTFILE=$1
SETTINGS=${2:-plain cupti_raw cupti_sys default sys-trace torch.profiler}
WORKLOAD=${3:-transformer}
SECONDS_EACH=${4:-8}
PERF=${PERF:-perf}
PERFDIR=$(cd "$(dirname "$PERF")" && pwd)
export LD_LIBRARY_PATH="$PERFDIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
PY=${PYTHON:-python3}
TMP=$(mktemp -d)
{
  echo "perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)"
  "$PERF" --version
  for s in $SETTINGS; do
    echo; echo "=================== $s ($WORKLOAD, ${SECONDS_EACH} s)"
    ${PIN:-taskset -c 2-9} "$PERF" record -F 1999 -o "$TMP/$s.data" -- \
      "$PY" benchmarks/gpu_steady.py --setting "$s" --workload "$WORKLOAD" --seconds "$SECONDS_EACH" 2>&1 |
      grep -v "^\[ perf record" | tail -3
    echo "--- samples by thread and library (all threads)"
    "$PERF" report -i "$TMP/$s.data" --no-children -n --sort comm,dso --stdio --percent-limit 0.3 2>/dev/null |
      grep -v "^#" | grep -v "^$" | head -40
    echo "--- samples by thread"
    "$PERF" report -i "$TMP/$s.data" --no-children -n --sort pid --stdio --percent-limit 0.5 2>/dev/null |
      grep -v "^#" | grep -v "^$" | head -16
    echo "--- functions (>= 0.4 %)"
    "$PERF" report -i "$TMP/$s.data" --no-children -n --sort comm,dso,sym --stdio --percent-limit 0.4 2>/dev/null |
      grep -v "^#" | grep -v "^$" | cut -c1-170 | head -70
    rm -f "$TMP/$s.data"
  done
} > "$OUTFILE" 2>&1
rm -rf "$TMP"
