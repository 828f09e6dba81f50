#!/usr/bin/env bash
# Who calls the functions matching LEAF (a regex; e.g. a lock, malloc, the clock) in one tracing
# setting: perf with DWARF call graphs attached to benchmarks/gpu_steady.py once warm, counted
# per thread and the first three callers (benchmarks/perf_callers.awk). PERF as for
# gpu_perf_ladder.sh; FREQ (Hz, default 499) and STACK_BYTES (default 8192) size the record.
#
#   PERF=build/perf-tool/perf bash benchmarks/gpu_perf_callers.sh OUT_FILE SETTING LEAF \
#       [WORKLOAD] [SECONDS]
set -uo pipefail
OUTFILE=$1 SETTING=$2 LEAF=$3
WORKLOAD=${4:-transformer}
SECONDS_EACH=${5:-3}
PERF=${PERF:-perf}
PERFDIR=$(cd "$(dirname "$PERF")" && pwd)
PY=${PYTHON:-python3}
TMP=$(mktemp -d)
{
  echo "=================== callers of /$LEAF/ under $SETTING ($WORKLOAD, ${SECONDS_EACH} s)"
  ${PIN:-taskset -c 2-9} "$PY" benchmarks/gpu_steady.py --setting "$SETTING" --workload "$WORKLOAD" \
    --seconds "$((SECONDS_EACH + 2))" --ready "$TMP/ready" > "$TMP/steady.log" 2>&1 &
  pid=$!
  for _ in $(seq 600); do [ -e "$TMP/ready" ] || ! kill -0 $pid 2>/dev/null && break; sleep 0.1; done
  LD_LIBRARY_PATH="$PERFDIR/lib" "$PERF" record -F "${FREQ:-499}" --call-graph dwarf,${STACK_BYTES:-8192} -p $pid \
    -o "$TMP/cg.data" -- sleep "$SECONDS_EACH" > /dev/null 2>&1
  wait $pid
  grep -v Warning "$TMP/steady.log" | tail -1
  LD_LIBRARY_PATH="$PERFDIR/lib" "$PERF" script -i "$TMP/cg.data" -F tid,ip,sym 2>/dev/null |
    awk -v LEAF="$LEAF" -v N=3 -f benchmarks/perf_callers.awk | sort -rn | head -40
} >> "$OUTFILE" 2>&1
[ -n "${KEEP_TMP:-}" ] && echo "kept $TMP" || rm -rf "$TMP"
