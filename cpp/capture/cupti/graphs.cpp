// CUDA graph nodes' capture sites; see graphs.hpp.
#include "graphs.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>

#include "capture/context.hpp"

namespace rocprof::cupti::graphs {
namespace {

std::mutex g_mu;
std::unordered_map<uint64_t, NodeSite> g_nodes;    // node id (original or clone) → capture site
std::unordered_map<uint64_t, uint32_t> g_numbers;  // node id → its number (node_number)
std::atomic<uint64_t> g_created{0}, g_cloned{0}, g_clones_unknown{0}, g_kernels{0},
    g_kernels_sited{0}, g_spans{0};

}  // namespace

void node_created(uint64_t node_id, const NodeSite& site) {
  g_created.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> g(g_mu);
  // Never over a clone's entry: cudaGraphInstantiate creates the executable graph's nodes too
  // (its own line is no capture site), and its clone callback may come first.
  g_nodes.try_emplace(node_id, site);
}

bool node_cloned(uint64_t original_id, uint64_t clone_id) {
  g_cloned.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> g(g_mu);
  auto it = g_nodes.find(original_id);
  if (it == g_nodes.end()) {
    g_clones_unknown.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  const NodeSite site = it->second;  // copied first: the insertion may rehash
  g_nodes.insert_or_assign(clone_id, site);
  return true;
}

bool node_site(uint64_t node_id, NodeSite* out) {
  std::lock_guard<std::mutex> g(g_mu);
  auto it = g_nodes.find(node_id);
  if (it == g_nodes.end()) return false;
  *out = it->second;
  return true;
}

uint32_t node_number(uint64_t node_id) {
  std::lock_guard<std::mutex> g(g_mu);
  const auto [it, added] = g_numbers.try_emplace(node_id, 0);
  if (added) it->second = static_cast<uint32_t>(g_numbers.size());
  return it->second;
}

void set_callsite(uint64_t node_id, uint32_t callsite) {
  std::lock_guard<std::mutex> g(g_mu);
  auto it = g_nodes.find(node_id);
  if (it != g_nodes.end()) it->second.callsite = callsite;
}

void count_kernel(bool with_site) noexcept {
  g_kernels.fetch_add(1, std::memory_order_relaxed);
  if (with_site) g_kernels_sited.fetch_add(1, std::memory_order_relaxed);
}

void count_span() noexcept { g_spans.fetch_add(1, std::memory_order_relaxed); }

Counts counts() {
  return Counts{g_created.load(), g_cloned.load(),        g_clones_unknown.load(),
                g_kernels.load(), g_kernels_sited.load(), g_spans.load()};
}

void reset() {
  std::lock_guard<std::mutex> g(g_mu);
  g_nodes.clear();
  g_numbers.clear();
  for (auto* c : {&g_created, &g_cloned, &g_clones_unknown, &g_kernels, &g_kernels_sited, &g_spans})
    c->store(0);
}

void report(CaptureContext& c, bool counters_on) {
  const Counts n = counts();
  if (n.nodes == 0 && n.clones == 0 && n.kernels == 0 && n.spans == 0) return;
  c.info(MetadataInfo{"rocprof.cupti.graphs",
                      "nodes=" + std::to_string(n.nodes) + ",clones=" + std::to_string(n.clones) +
                          ",clones_unknown=" + std::to_string(n.clones_unknown) +
                          ",kernels=" + std::to_string(n.kernels) +
                          ",kernels_with_capture_site=" + std::to_string(n.kernels_with_site) +
                          ",spans=" + std::to_string(n.spans)});
  if (n.kernels > n.kernels_with_site)
    std::fprintf(stderr,
                 "rocprof: %llu of %llu kernels of CUDA graph replays have no capture site (the "
                 "graph was captured before profiling started): they carry the replay's line "
                 "(metadata rocprof.cupti.graphs)\n",
                 static_cast<unsigned long long>(n.kernels - n.kernels_with_site),
                 static_cast<unsigned long long>(n.kernels));
  const uint64_t uncounted = n.kernels + n.spans;
  if (counters_on && uncounted > 0) {
    const std::string why =
        std::to_string(uncounted) +
        " kernels of CUDA graph replays got no counters: counters are read per kernel launch "
        "call (CUPTI range profiler, kernel replay) and a replay runs its kernels in one "
        "cudaGraphLaunch; profile an eager step (or capture without graphs) for their counters";
    c.info(MetadataInfo{"rocprof.counters.graph_kernels", why});
    std::fprintf(stderr, "rocprof: %s (metadata rocprof.counters.graph_kernels)\n", why.c_str());
  }
}

}  // namespace rocprof::cupti::graphs
