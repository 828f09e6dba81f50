// The CUPTI mapping without a GPU: activity records built from the real CUPTI header structs
// go through map_activity into a FakeCaptureContext, and every field of what comes out is
// checked (Kineto tests its CUPTI mapping this way). Part of the C++ suite (ctest) wherever
// the CUPTI headers are found at build time; needs no libcupti and no driver.
#include <gtest/gtest.h>

#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "counters.hpp"
#include "cupti_state.hpp"
#include "graphs.hpp"
#include "tests/fake_capture_context.hpp"

namespace rocprof::cupti {
namespace {

using rocprof::testing::FakeCaptureContext;

// What the API ENTER callback would have noted on the launching thread.
void launched(uint32_t corr, uint32_t tid, uint32_t region, bool paused = false) {
  LaunchInfo& s = g_launch[corr & (kLaunchSlots - 1)];
  s.tid = tid;
  s.region_name_id = region;
  s.callsite_id = 0;
  s.site_key = 0;
  s.paused = paused ? 1 : 0;
  s.corr.store(corr, std::memory_order_release);
}

CUpti_ActivityKernel10 kernel(const char* name, uint32_t corr) {
  CUpti_ActivityKernel10 k;
  std::memset(&k, 0, sizeof k);
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = name;
  k.start = 1000;
  k.end = 1750;
  k.deviceId = 1;
  k.contextId = 3;
  k.streamId = 7;
  k.gridX = 4, k.gridY = 2, k.gridZ = 1;
  k.blockX = 256, k.blockY = 1, k.blockZ = 1;
  k.staticSharedMemory = 128;
  k.dynamicSharedMemory = 64;
  k.localMemoryPerThread = 8;
  k.registersPerThread = 32;
  k.correlationId = corr;
  k.gridId = 99;
  return k;
}

class CuptiMapping : public ::testing::Test {
 protected:
  void SetUp() override {
    CuptiSettingsCompiled();
    records_reset(&ctx);
  }
  void TearDown() override { records_reset(nullptr); }
  static void CuptiSettingsCompiled() { CuptiSettingsCompiled(KernelNameSettings{}); }
  static void CuptiSettingsCompiled(const KernelNameSettings& names) {
    g_settings = Settings{};
    std::string why;
    ASSERT_TRUE(g_names.configure(names, &why)) << why;
  }
  // The display name each kernel's symbol row got, in launch order; "" for no row.
  std::vector<std::string> displays(std::initializer_list<const char*> symbols) {
    std::vector<std::string> out;
    uint32_t corr = 100;
    for (const char* symbol : symbols) {
      launched(++corr, 1, 0);
      const auto k = kernel(symbol, corr);
      const size_t before = ctx.rows<KernelSymbolInfo>().size();
      map_activity(ctx, reinterpret_cast<const CUpti_Activity*>(&k));
      const auto rows = ctx.rows<KernelSymbolInfo>();
      out.push_back(rows.size() > before ? rows.back().display_name : "");
    }
    return out;
  }
  FakeCaptureContext ctx;
};

TEST_F(CuptiMapping, KernelEveryField) {
  const uint32_t forward = ctx.intern("forward");
  launched(42, 4242, forward);
  const auto k = kernel("_Z6kernelPfi", 42);
  map_activity(ctx, reinterpret_cast<const CUpti_Activity*>(&k));
  ASSERT_EQ(ctx.records.size(), 1u);
  const Record& r = ctx.records[0];
  EXPECT_EQ(r.kind, RecordKind::kKernelDispatch);
  EXPECT_EQ(ctx.text(r.category_id), "KERNEL_DISPATCH");
  EXPECT_EQ(r.start, 1000u);
  EXPECT_EQ(r.end, 1750u);
  EXPECT_EQ(r.tid, 4242u);
  EXPECT_EQ(r.correlation_id, 42u);
  const KernelData& d = r.kernel;
  EXPECT_EQ(d.agent_id, gpu_agent_id(1));
  EXPECT_EQ(d.stream_id, 7u);
  EXPECT_EQ(d.queue_id, 7u);
  EXPECT_EQ(d.grid[0], 1024u);  // ROCm's grid: work-items, not blocks
  EXPECT_EQ(d.grid[1], 2u);
  EXPECT_EQ(d.grid[2], 1u);
  EXPECT_EQ(d.block[0], 256u);
  EXPECT_EQ(d.static_shared, 128u);
  EXPECT_EQ(d.dynamic_shared, 64u);
  EXPECT_EQ(d.local_per_thread, 8u);
  EXPECT_EQ(d.registers, 32u);
  EXPECT_EQ(d.region_name_id, forward);
  EXPECT_EQ(d.dispatch_id, 99u);
  const auto symbols = ctx.rows<KernelSymbolInfo>();
  ASSERT_EQ(symbols.size(), 1u);
  EXPECT_EQ(symbols[0].id, d.kernel_id);
  EXPECT_EQ(symbols[0].kernel_name, "_Z6kernelPfi");
  EXPECT_EQ(symbols[0].display_name, "kernel(float*, int)");
  EXPECT_EQ(symbols[0].group_segment_size, 128u);
  EXPECT_EQ(symbols[0].arch_vgpr_count, 32u);
  const auto agents = ctx.rows<AgentInfo>();
  ASSERT_EQ(agents.size(), 1u);
  EXPECT_EQ(agents[0].id, gpu_agent_id(1));
  EXPECT_EQ(agents[0].vendor_name, "NVIDIA");
  const auto streams = ctx.rows<StreamInfo>();
  ASSERT_EQ(streams.size(), 2u);  // the stream, and the same as a queue
  EXPECT_EQ(streams[0].id, 7u);
  EXPECT_NE(streams[0].is_queue, streams[1].is_queue);
}

TEST_F(CuptiMapping, SymbolsAgentsStreamsOnceEach) {
  for (uint32_t corr = 1; corr <= 3; ++corr) {
    launched(corr, 1, 0);
    const auto k = kernel("_Z6kernelPfi", corr);
    map_activity(ctx, reinterpret_cast<const CUpti_Activity*>(&k));
  }
  EXPECT_EQ(ctx.records.size(), 3u);
  EXPECT_EQ(ctx.rows<KernelSymbolInfo>().size(), 1u);
  EXPECT_EQ(ctx.rows<AgentInfo>().size(), 1u);
  EXPECT_EQ(ctx.rows<StreamInfo>().size(), 2u);
}

TEST_F(CuptiMapping, PausedLaunchesAndExcludedKernelsLeaveNothing) {
  launched(5, 1, 0, /*paused=*/true);
  auto k = kernel("_Z6kernelPfi", 5);
  map_activity(ctx, reinterpret_cast<const CUpti_Activity*>(&k));
  EXPECT_TRUE(ctx.records.empty());
  KernelNameSettings names;
  names.exclude = "^gemm_[0-9]+";
  CuptiSettingsCompiled(names);
  launched(6, 1, 0);
  k = kernel("gemm_128", 6);
  map_activity(ctx, reinterpret_cast<const CUpti_Activity*>(&k));
  EXPECT_TRUE(ctx.records.empty());
  EXPECT_TRUE(ctx.rows<KernelSymbolInfo>().empty());  // a filtered kernel names nothing
}

TEST_F(CuptiMapping, UntimedGpuWorkIsCountedNotStored) {
  // What a forced flush hands over for work still in flight: start = end = 0.
  launched(8, 1, 0);
  auto k = kernel("_Z6kernelPfi", 8);
  k.start = k.end = 0;
  map_activity(ctx, reinterpret_cast<const CUpti_Activity*>(&k));
  CUpti_ActivityMemcpy6 m;
  std::memset(&m, 0, sizeof m);
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  m.correlationId = 9;
  launched(9, 1, 0);
  map_activity(ctx, reinterpret_cast<const CUpti_Activity*>(&m));
  EXPECT_TRUE(ctx.records.empty());
  EXPECT_EQ(ctx.dropped["cupti_untimed_gpu_work"], 2u);
  launched(10, 1, 0);
  k = kernel("_Z6kernelPfi", 10);  // timed: stored
  map_activity(ctx, reinterpret_cast<const CUpti_Activity*>(&k));
  EXPECT_EQ(ctx.records.size(), 1u);
  EXPECT_EQ(ctx.dropped["cupti_untimed_gpu_work"], 2u);
}

// PyTorch's (g++-mangled from declarations of the same shape) and a plain C++ kernel.
constexpr const char* kVectorized =
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_"
    "T1_";
constexpr const char* kTemplated = "_ZN2ns1kIiEEvPfi";  // void ns::k<int>(float*, int)

TEST_F(CuptiMapping, KernelNamesDemangledTruncatedOrMangled) {
  EXPECT_EQ(displays({kTemplated, "triton_poi_fused_add_0"}),
            (std::vector<std::string>{"void ns::k<int>(float*, int)", "triton_poi_fused_add_0"}));
  records_reset(&ctx);
  KernelNameSettings names;
  names.truncate = true;  // -T
  CuptiSettingsCompiled(names);
  EXPECT_EQ(displays({kTemplated, kVectorized, "_Z6kernelPfi", "triton_poi_fused_add_0"}),
            (std::vector<std::string>{"k", "vectorized_elementwise_kernel", "kernel",
                                      "triton_poi_fused_add_0"}));
  records_reset(&ctx);
  names = KernelNameSettings{};
  names.mangled = true;  // -M
  CuptiSettingsCompiled(names);
  EXPECT_EQ(displays({kVectorized}), std::vector<std::string>{kVectorized});
  EXPECT_EQ(ctx.rows<KernelSymbolInfo>().back().kernel_name, kVectorized);
}

TEST_F(CuptiMapping, TraceKernelRegexesMatchTheDemangledName) {
  KernelNameSettings names;
  names.include = "^void (at::native|ns)::";  // --trace-kernel-include-regex
  names.exclude = "FillFunctor";              // --trace-kernel-exclude-regex
  CuptiSettingsCompiled(names);
  EXPECT_EQ(displays({kTemplated, kVectorized, "_Z6kernelPfi"}),
            (std::vector<std::string>{"void ns::k<int>(float*, int)", "", ""}));
  ASSERT_EQ(ctx.records.size(), 1u);  // only the kept kernel's dispatch
  EXPECT_EQ(ctx.records[0].correlation_id, 101u);
}

TEST_F(CuptiMapping, CopiesAndSets) {
  CUpti_ActivityMemcpy6 m;
  std::memset(&m, 0, sizeof m);
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = 1 << 20;
  m.start = 10, m.end = 30;
  m.deviceId = 0, m.contextId = 1, m.streamId = 3;
  m.correlationId = 77;
  launched(77, 555, 0);
  map_activity(ctx, reinterpret_cast<const CUpti_Activity*>(&m));
  CUpti_ActivityMemset4 s;
  std::memset(&s, 0, sizeof s);
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.bytes = 4096;
  s.value = 0xab;
  s.start = 40, s.end = 45;
  s.deviceId = 0, s.contextId = 1, s.streamId = 3;
  s.correlationId = 78;
  launched(78, 555, 0);
  map_activity(ctx, reinterpret_cast<const CUpti_Activity*>(&s));
  ASSERT_EQ(ctx.records.size(), 2u);
  const Record& c = ctx.records[0];
  EXPECT_EQ(c.kind, RecordKind::kMemoryCopy);
  EXPECT_EQ(ctx.text(c.category_id), "MEMORY_COPY");
  EXPECT_EQ(ctx.text(c.name_id), "MEMORY_COPY_HOST_TO_DEVICE");
  EXPECT_EQ(c.copy.src_agent_id, kCpuAgentId);
  EXPECT_EQ(c.copy.dst_agent_id, gpu_agent_id(0));
  EXPECT_EQ(c.copy.bytes, 1u << 20);
  EXPECT_EQ(c.copy.stream_id, 3u);
  EXPECT_EQ(c.copy.src_memory, static_cast<uint8_t>(MemoryKind::kPageable));
  EXPECT_EQ(c.copy.dst_memory, static_cast<uint8_t>(MemoryKind::kDevice));
  EXPECT_EQ(c.tid, 555u);
  EXPECT_EQ(c.start, 10u);
  EXPECT_EQ(c.end, 30u);
  const Record& st = ctx.records[1];
  EXPECT_EQ(st.flags & kFlagMemset, kFlagMemset);
  EXPECT_EQ(ctx.text(st.name_id), "MEMORY_SET");
  EXPECT_EQ(st.copy.value, 0xabu);
  EXPECT_EQ(st.copy.bytes, 4096u);
  EXPECT_EQ(st.copy.src_agent_id, gpu_agent_id(0));
  EXPECT_EQ(st.copy.src_memory, 0u);  // a set has no source; CUPTI's record names no kinds
}

TEST_F(CuptiMapping, AllocationsAndSynchronisations) {
  CUpti_ActivityMemory4 m;
  std::memset(&m, 0, sizeof m);
  m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  m.address = 0x7f0000001000ull;
  m.bytes = 8192;
  m.timestamp = 500;
  m.deviceId = 0;
  m.processId = 321;
  m.correlationId = 90;  // no ENTER callback seen: the process id stands in for the thread
  map_activity(ctx, reinterpret_cast<const CUpti_Activity*>(&m));
  CUpti_ActivitySynchronization2 s;
  std::memset(&s, 0, sizeof s);
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  s.start = 600, s.end = 900;
  s.correlationId = 91;
  launched(91, 777, 0);
  map_activity(ctx, reinterpret_cast<const CUpti_Activity*>(&s));
  ASSERT_EQ(ctx.records.size(), 2u);
  const Record& a = ctx.records[0];
  EXPECT_EQ(a.kind, RecordKind::kMemoryAlloc);
  EXPECT_EQ(ctx.text(a.category_id), "MEMORY_ALLOCATION");
  EXPECT_EQ(a.alloc.op, 1u);  // FREE
  EXPECT_EQ(a.alloc.address, 0x7f0000001000ull);
  EXPECT_EQ(a.alloc.bytes, 8192u);
  EXPECT_EQ(a.alloc.agent_id, gpu_agent_id(0));
  EXPECT_EQ(a.tid, 321u);
  const Record& y = ctx.records[1];
  EXPECT_EQ(y.kind, RecordKind::kRegion);
  EXPECT_EQ(ctx.text(y.category_id), "CUDA_SYNCHRONIZATION");
  EXPECT_EQ(ctx.text(y.name_id), "STREAM_SYNCHRONIZE");
  EXPECT_EQ(y.tid, 777u);
  EXPECT_EQ(y.end - y.start, 300u);
}

// CUDA graphs: a node seen at capture (CUPTI's GRAPHNODE_CREATED on the capturing thread) and
// cloned at instantiation (GRAPHNODE_CLONED); its replayed kernel record carries the clone's id.
TEST_F(CuptiMapping, GraphKernelTakesItsNodesCaptureSite) {
  graphs::reset();
  const uint32_t capture_range = ctx.intern("capture"), replay_range = ctx.intern("step");
  const uint32_t capture_line = ctx.intern("[{\"file\":\"/u/train.py\",\"line\":12}]");
  const uint32_t replay_line = ctx.intern("[{\"file\":\"/u/train.py\",\"line\":20}]");
  graphs::NodeSite at_capture;
  at_capture.region = capture_range;
  at_capture.callsite = capture_line;
  at_capture.range_corr = 7;
  graphs::node_created(5, at_capture);
  // Instantiation: the executable graph's node is created (on the instantiating line) and
  // cloned from its original, in either order; the capture's site wins.
  graphs::NodeSite at_instantiate;
  at_instantiate.callsite = ctx.intern("[{\"file\":\"/u/train.py\",\"line\":14}]");
  EXPECT_TRUE(graphs::node_cloned(5, 105));
  graphs::node_created(105, at_instantiate);
  graphs::node_created(205, at_instantiate);
  EXPECT_TRUE(graphs::node_cloned(5, 205));
  graphs::NodeSite seen;
  ASSERT_TRUE(graphs::node_site(205, &seen));
  EXPECT_EQ(seen.callsite, capture_line);
  EXPECT_FALSE(graphs::node_cloned(6, 106));  // created before the session: nothing to copy
  // The replay: cudaGraphLaunch's ENTER callback saw the replaying thread, range and line.
  launched(50, 4242, replay_range);
  g_launch[50].callsite_id = replay_line;
  auto k = kernel("_Z6kernelPfi", 50);
  k.graphId = 3;
  k.graphNodeId = 105;
  map_activity(ctx, reinterpret_cast<const CUpti_Activity*>(&k));
  // A node never seen at capture keeps the replay's line, with its ids.
  k.graphNodeId = 106;
  map_activity(ctx, reinterpret_cast<const CUpti_Activity*>(&k));
  // An eager kernel: no graph.
  launched(51, 4242, replay_range);
  k = kernel("_Z6kernelPfi", 51);
  map_activity(ctx, reinterpret_cast<const CUpti_Activity*>(&k));
  ASSERT_EQ(ctx.records.size(), 3u);
  const KernelData& node = ctx.records[0].kernel;
  EXPECT_EQ(ctx.records[0].tid, 4242u);  // the replaying thread
  EXPECT_EQ(node.graph_id, 3u);
  EXPECT_EQ(node.graph_node_id, 1u);  // numbered in order of first sight
  EXPECT_EQ(node.callsite_id, capture_line);
  EXPECT_EQ(node.region_name_id, capture_range);
  EXPECT_EQ(node.range_corr, 7u);
  const KernelData& unknown = ctx.records[1].kernel;
  EXPECT_EQ(unknown.graph_node_id, 2u);
  EXPECT_EQ(unknown.callsite_id, replay_line);
  EXPECT_EQ(unknown.region_name_id, replay_range);
  const KernelData& eager = ctx.records[2].kernel;
  EXPECT_EQ(eager.graph_id, 0u);
  EXPECT_EQ(eager.graph_node_id, 0u);
  const graphs::Counts n = graphs::counts();
  EXPECT_EQ(n.nodes, 3u);
  EXPECT_EQ(n.clones, 3u);
  EXPECT_EQ(n.clones_unknown, 1u);
  EXPECT_EQ(n.kernels, 2u);
  EXPECT_EQ(n.kernels_with_site, 1u);
  // At stop: the counts, and under --pmc the graph kernels that got no counters, with why.
  graphs::report(ctx, /*counters_on=*/true);
  std::string counts, uncounted;
  for (const MetadataInfo& m : ctx.rows<MetadataInfo>()) {
    if (m.tag == "rocprof.cupti.graphs") counts = m.value;
    if (m.tag == "rocprof.counters.graph_kernels") uncounted = m.value;
  }
  EXPECT_EQ(counts,
            "nodes=3,clones=3,clones_unknown=1,kernels=2,kernels_with_capture_site=1,spans=0");
  EXPECT_EQ(uncounted.rfind("2 kernels of CUDA graph replays got no counters", 0), 0u) << uncounted;
  graphs::reset();
}

// --graph-trace graph: CUPTI's GRAPH_TRACE record is one dispatch per replay, named by its graph.
TEST_F(CuptiMapping, GraphTraceSpanIsOneDispatchPerReplay) {
  graphs::reset();
  CUpti_ActivityGraphTrace2 g;
  std::memset(&g, 0, sizeof g);
  g.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
  g.correlationId = 60;
  g.start = 100, g.end = 900;
  g.deviceId = 0, g.contextId = 1, g.streamId = 9;
  g.graphId = 4;
  launched(60, 31, 0);
  map_activity(ctx, reinterpret_cast<const CUpti_Activity*>(&g));
  g.correlationId = 61;
  launched(61, 31, 0);
  map_activity(ctx, reinterpret_cast<const CUpti_Activity*>(&g));
  ASSERT_EQ(ctx.records.size(), 2u);
  const Record& r = ctx.records[0];
  EXPECT_EQ(r.kind, RecordKind::kKernelDispatch);
  EXPECT_EQ(ctx.text(r.name_id), "CUDA graph 4");
  EXPECT_EQ(r.end - r.start, 800u);
  EXPECT_EQ(r.tid, 31u);
  EXPECT_EQ(r.kernel.graph_id, 4u);
  EXPECT_EQ(r.kernel.graph_node_id, 0u);
  EXPECT_EQ(r.kernel.stream_id, 9u);
  const auto symbols = ctx.rows<KernelSymbolInfo>();
  ASSERT_EQ(symbols.size(), 1u);  // one symbol per graph, not per replay
  EXPECT_EQ(symbols[0].id, r.kernel.kernel_id);
  EXPECT_EQ(ctx.records[1].kernel.kernel_id, r.kernel.kernel_id);
  EXPECT_EQ(graphs::counts().spans, 2u);
  graphs::reset();
}

// Under --pmc a launch's record handed over again by a counter pass is dropped by its
// correlation id; a graph replay's kernels share one id and must all stay.
TEST_F(CuptiMapping, GraphKernelsSharingAReplaysIdAllStayUnderCounters) {
  graphs::reset();
  counters::begin_dedupe();
  launched(70, 1, 0);
  for (uint64_t node : {11u, 12u, 13u}) {
    auto k = kernel("_Z6kernelPfi", 70);
    k.graphId = 2;
    k.graphNodeId = node;
    map_activity(ctx, reinterpret_cast<const CUpti_Activity*>(&k));
  }
  launched(71, 1, 0);
  for (int i = 0; i < 2; ++i) {  // an eager launch and its counter-pass replay
    const auto k = kernel("_Z6kernelPfi", 71);
    map_activity(ctx, reinterpret_cast<const CUpti_Activity*>(&k));
  }
  const uint64_t replayed = counters::replayed_kernel_records();  // 0 in builds without counters
  counters::end_dedupe();
  EXPECT_EQ(ctx.records.size(), 5u - replayed);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(ctx.records[i].kernel.graph_node_id, 1u + i);
  graphs::reset();
}

// Under --pmc CUPTI hands profiled kernels over untimed: each takes the times its counters gave
// (its launch's start, plus gpu__time_duration.sum); one the counters did not time stays as
// given, for its counter values may still attach to it; a timed record keeps CUPTI's times.
TEST_F(CuptiMapping, UntimedKernelsUnderCountersTakeTheirCountersTimes) {
  counters::begin_dedupe();
  if (!counters::replaying()) GTEST_SKIP() << "this build has no per-kernel counters";
  counters::remember_kernel_time(80, 5000, 5420);
  for (uint32_t corr : {80u, 81u, 82u}) {
    launched(corr, 1, 0);
    auto k = kernel("_Z6kernelPfi", corr);
    if (corr != 82) k.start = k.end = 0;
    map_activity(ctx, reinterpret_cast<const CUpti_Activity*>(&k));
  }
  counters::end_dedupe();
  ASSERT_EQ(ctx.records.size(), 3u);
  EXPECT_EQ(ctx.records[0].start, 5000u);
  EXPECT_EQ(ctx.records[0].end, 5420u);
  EXPECT_EQ(ctx.records[1].start, 0u);
  EXPECT_EQ(ctx.records[1].end, 0u);
  EXPECT_EQ(ctx.records[2].start, 1000u);
  EXPECT_EQ(ctx.records[2].end, 1750u);
  EXPECT_EQ(ctx.dropped.count("cupti_untimed_gpu_work"), 0u);
}

// CUPTI's node ids are 64-bit: a graph's first node has low 32 bits of 0 (seen on an H100 for
// the first kernel of every captured graph). Each node keeps one non-zero number per session.
TEST_F(CuptiMapping, GraphNodeIdsBeyond32BitsKeepDistinctNumbers) {
  graphs::reset();
  launched(80, 1, 0);
  for (uint64_t node :
       {uint64_t{3} << 32, (uint64_t{3} << 32) + 1, uint64_t{4} << 32, uint64_t{3} << 32}) {
    auto k = kernel("_Z6kernelPfi", 80);
    k.graphId = 3;
    k.graphNodeId = node;
    map_activity(ctx, reinterpret_cast<const CUpti_Activity*>(&k));
  }
  ASSERT_EQ(ctx.records.size(), 4u);
  EXPECT_EQ(ctx.records[0].kernel.graph_node_id, 1u);
  EXPECT_EQ(ctx.records[1].kernel.graph_node_id, 2u);
  EXPECT_EQ(ctx.records[2].kernel.graph_node_id, 3u);
  EXPECT_EQ(ctx.records[3].kernel.graph_node_id, 1u);  // the same node in the next replay
  graphs::reset();
}

}  // namespace
}  // namespace rocprof::cupti
