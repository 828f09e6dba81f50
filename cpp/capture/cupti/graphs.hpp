// CUDA graphs: where each graph node was captured, found again for every kernel its replays run.
//
// A kernel launched by a graph replay has only the replay call (cudaGraphLaunch) as its launch:
// its Python line would be the replay's, the same for every node. CUPTI's resource callbacks
// name each node as it is created (on the capturing thread, inside the captured launch call) and
// as it is cloned (cudaGraphInstantiate copies the nodes into the executable graph, whose node
// ids the kernel records carry). The backend notes the capturing thread's Python frames and
// ROCTx range per node; clones inherit their original's; the kernel record of a replay finds its
// node's. Capture and instantiation are rare: a mutex-guarded map, never on a launch's path.
#pragma once
#include <cstdint>

namespace rocprof {
class CaptureContext;
}

namespace rocprof::cupti::graphs {

struct NodeSite {
  uint32_t region = 0;    // innermost ROCTx range's name at capture
  uint32_t callsite = 0;  // interned call-site JSON, when already known at capture
  uint64_t key = 0;       // the capturing thread's Python frame chain (callsite.hpp)
  uint64_t range_corr = 0;
};

void node_created(uint64_t node_id, const NodeSite& site);
// Returns false when the original node was never seen (created before the session).
bool node_cloned(uint64_t original_id, uint64_t clone_id);
bool node_site(uint64_t node_id, NodeSite* out);
// The node's number in this session, from 1 in order of first sight, the same for every replay:
// CUPTI's node ids are 64-bit and the first node of a graph has low 32 bits of 0, so the
// record's 32-bit field cannot carry them.
uint32_t node_number(uint64_t node_id);
// Caches the call-site id resolved for a node (resolution happens once per node).
void set_callsite(uint64_t node_id, uint32_t callsite);

struct Counts {
  uint64_t nodes, clones, clones_unknown;  // resource callbacks seen
  uint64_t kernels, kernels_with_site;     // kernel records of graph replays
  uint64_t spans;                          // --graph-trace graph: replay spans
};
Counts counts();
void count_kernel(bool with_site) noexcept;
void count_span() noexcept;
void reset();  // a new session
// At stop: the counts as metadata, and one printed line each for graph kernels left without
// their capture site and (`counters_on`: --pmc/--sol) without counter values.
void report(CaptureContext& c, bool counters_on);

}  // namespace rocprof::cupti::graphs
