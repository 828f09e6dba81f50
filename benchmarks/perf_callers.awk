# Callers of the leaf functions matching LEAF in `perf script -F tid,ip,sym` output (a call-graph
# record): counts per (thread, leaf, the first N frames above it that are not LEAF's own).
#   perf script -F tid,ip,sym | awk -v LEAF='pthread_mutex_(un)?lock|malloc' -v N=3 -f perf_callers.awk
function flush() {
  if (n > 0 && frames[1] ~ LEAF) {
    key = tid " " frames[1]; k = 0
    for (i = 2; i <= n && k < N; i++) { if (frames[i] !~ LEAF) { key = key " < " frames[i]; k++ } }
    count[key]++
  }
  n = 0
}
/^[^ \t]/ { flush(); tid = $1; next }
/^[ \t]/ { sub(/^[ \t]+[0-9a-f]+ /, ""); sub(/ \(inlined\)$/, ""); frames[++n] = substr($0, 1, 60) }
END { flush(); for (k in count) printf "%6d %s\n", count[k], k }
