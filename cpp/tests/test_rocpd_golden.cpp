// Golden check of the rocpd writer: a fixed set of records, info rows and strings goes through
// RocpdSink into a temp file, and every row of every table (with its columns, and the names in
// sqlite_master: the schema's SQL itself is rocpd/schema's business) is dumped with SQLite's
// quote() — types and values, NULL distinct from '' and 0 — and compared with
// cpp/tests/golden/rocpd_sink.txt. The expectations were produced by the sink as it was before the
// mapping/writer split; a change of the output is a change of the database contract and
// must be made on purpose: ROCPROF_UPDATE_GOLDEN=1 rewrites the file.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "storage/rocpd_sink.hpp"
#include "storage/sqlite_api.hpp"

using namespace rocprof;

namespace {

const char* const kGuid = "0000ddb5-8903-7903-b269-cd8d3745bb8a";

std::vector<std::string> column(const sql::Api* api, sql::sqlite3* db, const std::string& query) {
  std::vector<std::string> out;
  sql::sqlite3_stmt* s = nullptr;
  if (api->prepare_v2(db, query.c_str(), -1, &s, nullptr) != sql::kOk) {
    out.push_back("<prepare failed: " + std::string(api->errmsg(db)) + " in " + query + ">");
    return out;
  }
  while (api->step(s) == sql::kRow) {
    const unsigned char* t = api->column_text(s, 0);
    out.emplace_back(t ? reinterpret_cast<const char*>(t) : "<null>");
  }
  api->finalize(s);
  return out;
}

std::string dump(const std::string& path) {
  std::string error;
  const sql::Api* api = sql::api(&error);
  sql::sqlite3* db = nullptr;
  if (api->open_v2(path.c_str(), &db, sql::kOpenReadWrite, nullptr) != sql::kOk)
    return "<cannot open>";
  std::ostringstream out;
  out << "## sqlite_master\n";
  for (const auto& row :
       column(api, db,
              "SELECT type || ' ' || name || ' ' || tbl_name FROM sqlite_master ORDER BY rowid"))
    out << row << "\n";
  for (const auto& table :
       column(api, db, "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")) {
    const auto cols =
        column(api, db, "SELECT name FROM pragma_table_xinfo('" + table + "') ORDER BY cid");
    std::string select, header;
    for (const auto& c : cols) {
      select += (select.empty() ? "" : " || '|' || ") + std::string("quote(\"") + c + "\")";
      header += (header.empty() ? "" : "|") + c;
    }
    out << "## " << table << "\n" << header << "\n";
    for (const auto& row :
         column(api, db, "SELECT " + select + " FROM \"" + table + "\" ORDER BY rowid"))
      out << row << "\n";
  }
  api->close_v2(db);
  return out.str();
}

Record base(RecordKind kind, uint32_t tid, uint64_t start, uint64_t end, uint32_t category,
            uint32_t name, uint64_t corr = 0, uint16_t flags = 0) {
  Record r{};
  r.kind = kind;
  r.flags = flags;
  r.tid = tid;
  r.start = start;
  r.end = end;
  r.category_id = category;
  r.name_id = name;
  r.correlation_id = corr;
  return r;
}

// String ids (1-based, in the order written).
enum : uint32_t {
  kMarker = 1,
  kRangeA,
  kKernelCat,
  kKernA,
  kCopyCat,
  kCopyHtoD,
  kAllocCat,
  kSampleCat,
  // second batch
  kCustomExt,
  kSiteCat,
  kLaunch,
  kRuntimeCat,
  kWorker,
  kStackCat,
  kSampleExt,
  kMemset,
  kRangeB,
};

// Call site ids (the producer's, 1-based).
enum : uint32_t { kCallsite = 1, kCallsite2 };

void feed(RocpdSink& sink) {
  sink.write_strings(
      1, {"MARKER_CORE_API", "range \"a\"\n\t\x01", "KERNEL_DISPATCH", "kern_a", "MEMORY_COPY",
          "MEMCPY_HOST_TO_DEVICE", "MEMORY_ALLOCATION", "PYTHON_SAMPLE"});
  sink.write_info(ThreadInfo{7, 50, 0, "main"});
  sink.write_info(ThreadInfo{8, 60, 0, ""});  // no such task in this process: no name found
  AgentInfo gpu;
  gpu.id = gpu_agent_id(0);
  gpu.absolute_index = 0;
  gpu.logical_index = 0;
  gpu.type_index = 0;
  gpu.uuid = "GPU-1234";
  gpu.name = gpu.model_name = gpu.product_name = "Test GPU";
  gpu.vendor_name = "NVIDIA";
  gpu.user_name = "cuda:0";
  gpu.extdata = "{\"sm\":90}";
  sink.write_info(gpu);
  sink.write_info(StreamInfo{0, false, "Default Stream", "{}"});
  sink.write_info(StreamInfo{7, false, "Stream 7", "{\"context\":1}"});
  sink.write_info(StreamInfo{0, true, "Default Queue", "{}"});
  PmcInfo pmc;  // keys are opaque to the writer: rocpd_info_pmc ids follow arrival order
  pmc.key = 101;
  pmc.agent_id = gpu_agent_id(0);
  pmc.name = pmc.symbol = "dram__bytes_read.sum";
  pmc.description = "# of bytes read from DRAM";
  pmc.component = "cupti";
  pmc.units = "byte";
  pmc.block = "dram";
  pmc.extdata = "{\"metric_type\":\"counter\"}";
  sink.write_info(pmc);
  pmc.key = 102;
  pmc.name = pmc.symbol = "dram__bytes.sum.peak_sustained";
  pmc.units = "byte/dram_cycle";
  pmc.is_constant = true;
  pmc.is_derived = true;
  sink.write_info(pmc);
  KernelSymbolInfo sym;
  sym.id = 1;
  sym.kernel_name = "_Z6kern_av";
  sym.display_name = "kern_a()";
  sym.kernel_object = 0xdeadbeef;
  sym.kernarg_segment_size = 16;
  sym.kernarg_segment_alignment = 8;
  sym.group_segment_size = 1024;
  sym.private_segment_size = 32;
  sym.sgpr_count = 10;
  sym.arch_vgpr_count = 40;
  sym.accum_vgpr_count = 0;
  sym.extdata = "{\"registers\":40}";
  sink.write_info(sym);
  sink.write_info(MetadataInfo{"rocprof.test.tag", "first"});
  sink.write_info(MetadataInfo{"rocprof.test.tag", "second"});  // upsert: one row

  std::vector<Record> rs;
  rs.push_back(base(RecordKind::kRegion, 7, 100, 200, kMarker, kRangeA, 1, kFlagMessage));
  rs.push_back(
      base(RecordKind::kRegion, 7, 210, 220, kMarker, kRangeA, 2, kFlagMessage));  // cached JSON
  rs.push_back(
      base(RecordKind::kRegion, 7, 230, 230, kMarker, kRangeA, 3, kFlagMessage | kFlagInstant));
  rs.push_back(
      base(RecordKind::kRegion, 7, 240, 999, kMarker, kRangeA, 4, kFlagMessage | kFlagOpenAtExit));
  rs.push_back(base(RecordKind::kRegion, 8, 250, 260, 0, kRangeA));  // no category: NULL
  // ROCTx records carry their message apart from the name (the API function).
  for (Record& m : rs)
    if (m.flags & kFlagMessage) m.region.message_id = kRangeA;
  {
    // A range keyed by its own correlation id (>= 2^32, as markers.cpp makes them), inside the
    // open one above: its region id is that id, its parent the outer range's.
    Record n =
        base(RecordKind::kRegion, 7, 262, 268, kMarker, kRangeB, (1ull << 32) | 5, kFlagMessage);
    n.region.message_id = kRangeA;
    n.region.range_corr = (1ull << 32) | 4;
    rs.push_back(n);
  }
  sink.write_records(rs.data(), rs.size());
  rs.clear();
  {
    Record k = base(RecordKind::kKernelDispatch, 7, 300, 400, kKernelCat, kKernA, 11);
    k.kernel.agent_id = gpu_agent_id(0);
    k.kernel.kernel_id = 1;
    k.kernel.grid[0] = 1024;
    k.kernel.grid[1] = 2;
    k.kernel.grid[2] = 3;
    k.kernel.block[0] = 256;
    k.kernel.block[1] = 1;
    k.kernel.block[2] = 1;
    k.kernel.static_shared = 1024;
    k.kernel.local_per_thread = 32;
    k.kernel.registers = 40;
    k.kernel.region_name_id = kKernA;
    k.kernel.dispatch_id = 1;
    rs.push_back(k);
  }
  sink.commit();
  sink.write_records(rs.data(), rs.size());
  rs.clear();

  sink.write_strings(kCustomExt,
                     {"{\"custom\":1}", kLaunchSiteCategory, "cudaLaunchKernel", "CUDA_RUNTIME_API",
                      "worker-1", "PYTHON_SAMPLE_STACK", "{\"value\":2.5}", "MEMSET", "range-b"});
  // Given by the producer (capture/python/launch_sites.cpp): the site's frame and its callers;
  // a second site with the same callers shares their row.
  sink.write_info(CallsiteInfo{kCallsite, kSiteCat,
                               "{\"file\":\"/u/train.py\",\"line\":12,\"function\":\"step\"}",
                               "[{\"file\":\"/u/main.py\",\"line\":3,\"function\":\"<module>\"}]"});
  sink.write_info(CallsiteInfo{kCallsite2, kSiteCat,
                               "{\"file\":\"/u/train.py\",\"line\":14,\"function\":\"step\"}",
                               "[{\"file\":\"/u/main.py\",\"line\":3,\"function\":\"<module>\"}]"});
  sink.write_info(
      StackInfo{1, 0, kStackCat, "{\"function\":\"main\"}", "{\"file\":\"m.py\",\"line\":1}"});
  sink.write_info(
      StackInfo{2, 1, kStackCat, "{\"function\":\"step\"}", "{\"file\":\"t.py\",\"line\":9}"});
  sink.write_info(StackInfo{3, 1, 0, "{}", "{}"});
  {
    Record r = base(RecordKind::kRegion, 7, 500, 600, kRuntimeCat, kLaunch, 21);
    r.region.extdata_id = kCustomExt;
    r.region.range_corr = (1ull << 32) | 5;
    r.region.external_id = 4;
    r.region.region_name_id = kRangeA;
    rs.push_back(r);
    Record o = base(RecordKind::kRegion, 7, 610, 999, kMarker, kRangeB, 22, kFlagOpenAtExit);
    rs.push_back(o);
    Record ox = base(RecordKind::kRegion, 7, 620, 999, kRuntimeCat, kLaunch, 23, kFlagOpenAtExit);
    ox.region.extdata_id = kCustomExt;
    rs.push_back(ox);
    Record p = base(RecordKind::kRegion, 7, 630, 640, kRuntimeCat, kLaunch, 24);
    p.region.range_corr = 3;
    rs.push_back(p);
  }
  {
    Record k = base(RecordKind::kKernelDispatch, 8, 700, 800, kKernelCat, kKernA, 31);
    k.kernel.agent_id = gpu_agent_id(0);
    k.kernel.stream_id = 7;
    k.kernel.queue_id = 0;
    k.kernel.kernel_id = 1;
    k.kernel.grid[0] = 8;
    k.kernel.grid[1] = 8;
    k.kernel.grid[2] = 8;
    k.kernel.block[0] = 32;
    k.kernel.block[1] = 4;
    k.kernel.block[2] = 2;
    k.kernel.static_shared = 512;
    k.kernel.dynamic_shared = 128;
    k.kernel.local_per_thread = 16;
    k.kernel.region_name_id = kRangeA;
    k.kernel.callsite_id = kCallsite;
    k.kernel.dispatch_id = 2;
    k.kernel.range_corr = (1ull << 32) | 5;
    rs.push_back(k);
    Record s = base(RecordKind::kKernelDispatch, 8, 810, 820, kKernelCat, kKernA, 32);
    s.kernel.agent_id = gpu_agent_id(0);
    s.kernel.kernel_id = 1;
    s.kernel.range_corr = 6;  // a range but no call site
    s.kernel.dispatch_id = 3;
    s.kernel.graph_id = 3;  // a CUDA graph replay's kernel: its graph's and node's ids
    s.kernel.graph_node_id = 105;
    rs.push_back(s);
  }
  {
    Record c = base(RecordKind::kMemoryCopy, 7, 900, 950, kCopyCat, kCopyHtoD, 41);
    c.copy.src_agent_id = kCpuAgentId;
    c.copy.dst_agent_id = gpu_agent_id(0);
    c.copy.stream_id = 7;
    c.copy.queue_id = 0;
    c.copy.src_address = 0x7f0000001000ull;
    c.copy.dst_address = 0xffffffff00000000ull;  // above INT64_MAX: stored as its two's complement
    c.copy.bytes = 4096;
    c.copy.region_name_id = kRangeA;
    c.copy.callsite_id = kCallsite2;
    rs.push_back(c);
    Record m = base(RecordKind::kMemoryCopy, 7, 960, 970, kCopyCat, kMemset, 42, kFlagMemset);
    m.copy.src_agent_id = 99;  // ignored for a memset: its own device
    m.copy.dst_agent_id = gpu_agent_id(0);
    m.copy.dst_address = 0x1000;
    m.copy.bytes = 256;
    m.copy.value = 0xff;
    m.copy.region_name_id = kMemset;
    rs.push_back(m);
    Record n = base(RecordKind::kMemoryCopy, 7, 980, 990, kCopyCat, kCopyHtoD, 43);
    n.copy.src_agent_id = kCpuAgentId;
    n.copy.dst_agent_id = gpu_agent_id(0);
    n.copy.bytes = 8;
    n.copy.range_corr = 9;
    rs.push_back(n);
  }
  const uint32_t ops[][2] = {{0, 0}, {1, 1}, {2, 2}, {3, 7}, {5, 0}};
  uint64_t t = 1000;
  for (const auto& ol : ops) {
    Record a = base(RecordKind::kMemoryAlloc, 7, t, t + 5, kAllocCat, 0, 50 + t);
    a.alloc.agent_id = gpu_agent_id(0);
    a.alloc.stream_id = 7;
    a.alloc.op = ol[0];
    a.alloc.level = ol[1];
    a.alloc.address = 0x2000 + t;
    a.alloc.bytes = t * 2;
    a.alloc.range_corr = ol[0] == 1 ? 4 : 0;
    rs.push_back(a);
    t += 10;
  }
  {
    Record s = base(RecordKind::kSample, 7, 1100, 1100, kSampleCat, 0);
    s.sample.stack_id = 2;
    s.sample.value = 0.0;
    rs.push_back(s);
    s.start = s.end = 1110;  // same thread and category: same track
    rs.push_back(s);
    Record o = base(RecordKind::kSample, 8, 1120, 1120, kSampleCat, 0);
    o.sample.stack_id = 1;
    rs.push_back(o);
    Record c =
        base(RecordKind::kSample, 7, 1130, 1130, kStackCat, 0);  // same thread, other category
    rs.push_back(c);
    Record x = base(RecordKind::kSample, 7, 1140, 1140, kSampleCat, 0);
    x.sample.track_id = 42;
    x.sample.extdata_id = kSampleExt;
    x.sample.value = 2.5;
    rs.push_back(x);
  }
  {
    // Counter values: before their dispatch (31, also named by its other id 131),
    // after it (32), and one whose dispatch never comes (counted in metadata at close).
    Record v = base(RecordKind::kPmcValue, 8, 1150, 1150, 0, 0, 31);
    v.pmc.pmc_key = 101;
    v.pmc.agent_id = gpu_agent_id(0);
    v.pmc.value = 4096.5;
    v.pmc.alt_correlation_id = 131;
    rs.insert(rs.begin(), v);
    v.correlation_id = 32;
    v.pmc.alt_correlation_id = 0;
    v.pmc.pmc_key = 102;
    v.pmc.value = 1e-9;
    rs.push_back(v);
    v.correlation_id = 999;
    rs.push_back(v);
  }
  rs.push_back(base(RecordKind::kThreadName, 7, 1200, 1200, 0, kWorker));
  rs.push_back(base(RecordKind::kNone, 7, 1300, 1300, 0, 0));
  sink.write_records(rs.data(), rs.size());
  sink.write_info(ThreadInfo{8, 60, 1250, ""});  // thread 8 ended
  sink.write_info(ThreadInfo{9, 70, 1260, "short-lived"});
  sink.write_info(MetadataInfo{"rocprof.dropped_records", "3"});
  sink.commit();
}

std::string golden_path() { return std::string(ROCPROF_GOLDEN_DIR) + "/rocpd_sink.txt"; }

}  // namespace

TEST(RocpdGolden, EveryRowOfEveryTableAsBefore) {
  const std::string path =
      std::string(::testing::TempDir()) + "/golden_" + std::to_string(getpid()) + ".db";
  for (const char* ext : {"", "-wal", "-shm", "-journal"}) std::remove((path + ext).c_str());
  SessionInfo info;
  info.path = path;
  info.guid = kGuid;
  info.options_json = "{\"kernel\":true}";
  info.pid = 42;
  info.ppid = 41;
  info.init_ns = 10;
  info.process_start_ns = 5;
  info.command = "python train.py --epochs 1";
  info.environment_json = "{\"HOME\":\"/root\"}";
  info.hostname = "host";
  info.system_name = "Linux";
  info.release = "6.1.0";
  info.version = "#1 SMP";
  info.machine = "x86_64";
  info.domain_name = "(none)";
  info.machine_id = "0123456789abcdef";
  info.cpu_model = "Test CPU @ 2.0GHz";
  info.metadata = {{"rocprof.version", "0.0.0-test"}, {"rocprof.forked_from", "41"}};
  {
    RocpdSink sink;
    std::string error;
    ASSERT_TRUE(sink.open(info, &error)) << error;
    feed(sink);
    sink.close(2000);
  }
  const std::string got = dump(path);
  for (const char* ext : {"", "-wal", "-shm", "-journal"}) std::remove((path + ext).c_str());
  if (std::getenv("ROCPROF_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(golden_path(), std::ios::binary) << got;
    GTEST_SKIP() << "rewrote " << golden_path();
  }
  std::ifstream in(golden_path(), std::ios::binary);
  ASSERT_TRUE(in.good()) << "missing " << golden_path();
  std::stringstream want;
  want << in.rdbuf();
  std::istringstream g(got), w(want.str());
  std::string gl, wl;
  int line = 0;
  while (true) {
    const bool more_g = static_cast<bool>(std::getline(g, gl));
    const bool more_w = static_cast<bool>(std::getline(w, wl));
    ++line;
    if (!more_g && !more_w) break;
    ASSERT_EQ(more_g ? gl : "<end>", more_w ? wl : "<end>") << "first difference at line " << line;
  }
}
