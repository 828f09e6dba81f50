// Test fixtures through the real writer: `_fixture_writer(path, ...)` opens a RocpdSink (the
// same mapping and writer a session uses) on a new database file and takes records and info
// rows with every value given by the caller — no session, no clock, no OS facts. rocpd's tests
// (rocpd/testing.py) build their databases with it, so what they read is what a session writes.
// Strings are interned here (rocpd_string ids 1, 2, ... in the order first seen), as the
// string table does for a session.
#include <pybind11/stl.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "bindings/registry.hpp"
#include "session/system_info.hpp"
#include "storage/rocpd_sink.hpp"

namespace py = pybind11;
using namespace rocprof;

namespace {

using Dim3 = std::vector<uint32_t>;

class FixtureWriter {
 public:
  FixtureWriter(const std::string& path, const std::optional<std::string>& guid, uint32_t pid,
                uint32_t ppid, const std::string& hostname, const std::string& command,
                const std::string& environment, const std::map<std::string, std::string>& metadata,
                uint64_t init, uint64_t start, const std::string& options,
                const std::string& cpu_model, const std::string& machine_id,
                const std::string& system_name, bool kernel_rename, bool guid_per_row) {
    info_.path = path;
    info_.kernel_rename = kernel_rename;
    info_.guid_per_row = guid_per_row;
    info_.guid = guid ? *guid : make_uuid_v7();
    info_.options_json = options;
    info_.pid = pid;
    info_.ppid = ppid;
    info_.init_ns = init;
    info_.process_start_ns = start;
    info_.command = command;
    info_.environment_json = environment;
    info_.hostname = hostname;
    info_.system_name = system_name;
    info_.machine_id = machine_id;
    info_.cpu_model = cpu_model;
    for (const auto& kv : metadata) info_.metadata.emplace_back(kv.first, kv.second);
    // As for a session (session/os_facts.hpp prepares the path): never into an existing file.
    struct stat st{};
    if (::stat(path.c_str(), &st) == 0) throw std::runtime_error(path + " already exists");
    std::string error;
    if (!sink_.open(info_, &error))
      throw std::runtime_error("cannot create " + path + ": " + error);
    open_ = true;
  }

  const std::string& guid() const { return info_.guid; }
  const std::string& path() const { return info_.path; }
  const std::string& suffix() const { return sink_.suffix(); }
  uint32_t pid() const { return info_.pid; }

  // rocpd_string id of `text` (0 for None), written on first use.
  uint32_t string(const std::string& text) {
    check();
    auto it = strings_.find(text);
    if (it != strings_.end()) return it->second;
    const uint32_t id = static_cast<uint32_t>(strings_.size()) + 1;
    strings_.emplace(text, id);
    sink_.write_strings(id, {text});
    return id;
  }
  uint32_t opt_string(const std::optional<std::string>& text) { return text ? string(*text) : 0; }

  void agent(uint32_t id, const std::string& type, uint32_t absolute_index, uint32_t logical_index,
             uint32_t type_index, const std::string& uuid, const std::string& name,
             const std::string& model_name, const std::string& vendor_name,
             const std::string& product_name, const std::string& user_name,
             const std::string& extdata) {
    AgentInfo a;
    a.id = id;
    a.type = type;
    a.absolute_index = absolute_index;
    a.logical_index = logical_index;
    a.type_index = type_index;
    a.uuid = uuid;
    a.name = name;
    a.model_name = model_name;
    a.vendor_name = vendor_name;
    a.product_name = product_name;
    a.user_name = user_name;
    a.extdata = extdata;
    info(a);
  }

  void stream(uint32_t id, const std::string& name, const std::string& extdata, bool queue) {
    info(StreamInfo{id, queue, name, extdata});
  }

  void kernel_symbol(uint32_t id, const std::string& kernel_name, const std::string& display_name,
                     uint64_t kernel_object, uint32_t kernarg_segment_size,
                     uint32_t kernarg_segment_alignment, uint32_t group_segment_size,
                     uint32_t private_segment_size, uint32_t sgpr_count, uint32_t arch_vgpr_count,
                     uint32_t accum_vgpr_count, const std::string& extdata) {
    KernelSymbolInfo k;
    k.id = id;
    k.kernel_name = kernel_name;
    k.display_name = display_name;
    k.kernel_object = kernel_object;
    k.kernarg_segment_size = kernarg_segment_size;
    k.kernarg_segment_alignment = kernarg_segment_alignment;
    k.group_segment_size = group_segment_size;
    k.private_segment_size = private_segment_size;
    k.sgpr_count = sgpr_count;
    k.arch_vgpr_count = arch_vgpr_count;
    k.accum_vgpr_count = accum_vgpr_count;
    k.extdata = extdata;
    // Its dispatches carry the display name's string id, as the GPU backends give it.
    kernel_names_[id] = string(display_name.empty() ? kernel_name : display_name);
    info(k);
  }

  void thread(uint32_t tid, const std::string& name, uint64_t start, uint64_t end) {
    info(ThreadInfo{tid, start, end, name});
  }
  void metadata(const std::string& tag, const std::string& value) {
    info(MetadataInfo{tag, value});
  }
  void stack(uint64_t id, uint64_t parent_id, const std::optional<std::string>& category,
             const std::string& call_stack, const std::string& line_info) {
    const uint32_t cat = opt_string(category);
    info(StackInfo{id, parent_id, cat, call_stack, line_info});
  }
  // A call site as the launch-site capture gives it: the site's frame (a JSON object) and the
  // frames outward of it (a JSON list, "" for none); returns the id records pass as callsite.
  uint32_t callsite(const std::string& site, const std::string& callers) {
    info(CallsiteInfo{++callsites_, string(kLaunchSiteCategory), site, callers});
    return callsites_;
  }

  // `message`: a ROCTx record, `name` its API function (roctxRangePushA, ...).
  void region(const std::string& category, const std::string& name, uint64_t start, uint64_t end,
              uint32_t tid, uint64_t correlation_id, const std::optional<std::string>& message,
              bool instant, bool open_at_exit, const std::optional<std::string>& extdata,
              uint64_t range_corr, uint64_t external_id,
              const std::optional<std::string>& region_name, uint32_t callsite) {
    Record r = base(RecordKind::kRegion, tid, start, end, category, name, correlation_id);
    r.flags = static_cast<uint16_t>((message ? kFlagMessage : 0) | (instant ? kFlagInstant : 0) |
                                    (open_at_exit ? kFlagOpenAtExit : 0));
    r.region.extdata_id = opt_string(extdata);
    r.region.message_id = opt_string(message);
    r.region.range_corr = range_corr;
    r.region.external_id = external_id;
    r.region.region_name_id = opt_string(region_name);
    r.region.callsite_id = callsite;
    write(r);
  }

  // A collective call as capture/nccl/ records it (RecordKind::kCollective).
  void collective(const std::string& name, uint64_t start, uint64_t end, uint32_t tid,
                  uint64_t count, uint64_t bytes, const std::string& datatype, uint64_t comm,
                  int32_t rank, int32_t nranks, int32_t root, int32_t peer, uint64_t stream,
                  uint64_t seq, const std::optional<std::string>& algo,
                  const std::optional<std::string>& proto, uint32_t nchannels) {
    Record r = base(RecordKind::kCollective, tid, start, end, "RCCL_API", name, 0);
    CollectiveData& c = r.coll;
    c.count = count;
    c.bytes = bytes;
    c.datatype_id = string(datatype);
    c.comm_hash = comm;
    c.rank = rank;
    c.nranks = nranks;
    c.root = root;
    c.peer = peer;
    c.stream = stream;
    c.seq = seq;
    c.algo_id = opt_string(algo);
    c.proto_id = opt_string(proto);
    c.nchannels = static_cast<uint16_t>(nchannels);
    write(r);
  }

  void kernel(uint32_t kernel_id, uint64_t start, uint64_t end, uint32_t tid, uint32_t agent,
              uint32_t stream, uint32_t queue, uint64_t correlation_id, uint64_t dispatch_id,
              const Dim3& grid, const Dim3& block, uint32_t static_shared, uint32_t dynamic_shared,
              uint32_t local_per_thread, uint32_t registers,
              const std::optional<std::string>& region_name, uint32_t callsite, uint64_t range_corr,
              const std::string& category) {
    Record r =
        base(RecordKind::kKernelDispatch, tid, start, end, category, std::nullopt, correlation_id);
    r.name_id = kernel_name_id(kernel_id);
    KernelData& k = r.kernel;
    k.agent_id = agent;
    k.stream_id = stream;
    k.queue_id = queue;
    k.kernel_id = kernel_id;
    dim3(grid, k.grid, "grid");
    dim3(block, k.block, "block");
    k.static_shared = static_shared;
    k.dynamic_shared = dynamic_shared;
    k.local_per_thread = local_per_thread;
    k.registers = registers;
    k.region_name_id = opt_string(region_name);
    k.callsite_id = callsite;
    k.dispatch_id = dispatch_id;
    k.range_corr = range_corr;
    write(r);
  }

  // Many dispatches of one shape, for benchmarks: rows of (kernel_id, start, end); dispatch
  // and correlation ids count from 1 in the order given.
  void kernels(const std::vector<std::tuple<uint32_t, uint64_t, uint64_t>>& rows, uint32_t tid,
               uint32_t agent, uint32_t stream, const Dim3& grid, const Dim3& block) {
    Record r = base(RecordKind::kKernelDispatch, tid, 0, 0, std::string("KERNEL_DISPATCH"),
                    std::nullopt, 0);
    r.kernel.agent_id = agent;
    r.kernel.stream_id = stream;
    dim3(grid, r.kernel.grid, "grid");
    dim3(block, r.kernel.block, "block");
    std::vector<Record> batch;
    batch.reserve(rows.size());
    for (const auto& [kernel_id, start, end] : rows) {
      r.kernel.kernel_id = kernel_id;
      r.name_id = kernel_name_id(kernel_id);
      r.start = start;
      r.end = end;
      r.correlation_id = r.kernel.dispatch_id = ++bulk_dispatches_;
      batch.push_back(r);
    }
    check();
    py::gil_scoped_release nogil;
    sink_.write_records(batch.data(), batch.size());
  }

  void memory_copy(const std::string& name, uint64_t start, uint64_t end, uint64_t bytes,
                   uint32_t tid, uint32_t src_agent, uint32_t dst_agent, uint64_t src_address,
                   uint64_t dst_address, uint32_t stream, uint32_t queue, uint64_t correlation_id,
                   bool memset, uint32_t value, const std::optional<std::string>& region_name,
                   uint32_t callsite, uint64_t range_corr, const std::string& category,
                   const std::string& src_memory, const std::string& dst_memory) {
    Record r = base(RecordKind::kMemoryCopy, tid, start, end, category, name, correlation_id);
    r.flags = memset ? kFlagMemset : 0;
    CopyData& c = r.copy;
    c.src_agent_id = src_agent;
    c.dst_agent_id = dst_agent;
    c.stream_id = stream;
    c.queue_id = queue;
    c.src_address = src_address;
    c.dst_address = dst_address;
    c.bytes = bytes;
    c.region_name_id = opt_string(region_name);
    c.value = value;
    c.range_corr = range_corr;
    c.callsite_id = callsite;
    c.src_memory = memory_kind(src_memory);
    c.dst_memory = memory_kind(dst_memory);
    write(r);
  }

  void allocation(const std::string& type, uint64_t start, uint64_t end, uint64_t bytes,
                  uint32_t tid, uint32_t agent, const std::string& level, uint64_t address,
                  uint32_t stream, uint64_t correlation_id, uint64_t range_corr,
                  const std::string& category) {
    static const char* const kOps[] = {"ALLOC", "FREE", "REALLOC", "RECLAIM"};
    static const char* const kLevels[] = {"REAL", "VIRTUAL", "SCRATCH"};
    Record r =
        base(RecordKind::kMemoryAlloc, tid, start, end, category, std::nullopt, correlation_id);
    AllocData& a = r.alloc;
    a.op = index_of(kOps, 4, type, "allocation type");
    a.level = index_of(kLevels, 3, level, "allocation level");
    a.agent_id = agent;
    a.stream_id = stream;
    a.address = address;
    a.bytes = bytes;
    a.range_corr = range_corr;
    write(r);
  }

  void name_object(uint32_t target, uint64_t object, const std::string& name, uint32_t tid) {
    Record r = base(RecordKind::kName, tid, 0, 0, std::nullopt, name, 0);
    r.name.target = target;
    r.name.object = object;
    write(r);
  }

  void sample(uint64_t timestamp, uint32_t tid, const std::string& category, uint64_t stack_id,
              uint64_t track_id, double value, const std::optional<std::string>& extdata,
              uint64_t correlation_id) {
    Record r = base(RecordKind::kSample, tid, timestamp, timestamp, category, std::nullopt,
                    correlation_id);
    r.sample.track_id = track_id;
    r.sample.stack_id = stack_id;
    r.sample.value = value;
    r.sample.extdata_id = opt_string(extdata);
    write(r);
  }

  // A counter (rocpd_info_pmc row) and a value of it for the dispatch with `correlation_id`
  // (a kPmcValue record: the sink pairs it with its dispatch, before or after it arrives).
  // `id` names the counter here, as a PmcInfo key does in a capture; the writer numbers the
  // rows 1, 2, ... in the order counters are described, so ids given in that order are kept.
  void pmc_info(uint32_t id, const std::string& name, uint32_t agent,
                const std::string& description, const std::string& units,
                const std::string& component, const std::string& block,
                const std::string& expression, bool is_constant, bool is_derived,
                const std::string& value_type, const std::string& extdata) {
    PmcInfo p;
    p.key = pmc_key(id);
    p.agent_id = agent;
    p.name = p.symbol = name;
    p.description = description;
    p.units = units;
    p.component = component;
    p.block = block;
    p.expression = expression;
    p.is_constant = is_constant;
    p.is_derived = is_derived;
    p.value_type = value_type;
    p.extdata = extdata;
    info(p);
  }

  void pmc_value(uint64_t correlation_id, uint32_t pmc_id, double value, uint32_t agent,
                 uint64_t alt_correlation_id) {
    Record r = base(RecordKind::kPmcValue, 0, 0, 0, std::nullopt, std::nullopt, correlation_id);
    r.pmc.pmc_key = pmc_key(pmc_id);
    r.pmc.agent_id = agent;
    r.pmc.value = value;
    r.pmc.alt_correlation_id = alt_correlation_id;
    write(r);
  }

  // One kPcSample record (record.hpp's PcSampleData) with every field given.
  void pc_sample(const std::string& kernel, uint64_t pc_offset, uint64_t samples, uint64_t start,
                 uint64_t end, uint32_t agent, const std::optional<std::string>& stall_reason,
                 const std::optional<std::string>& source_file, uint32_t line,
                 const std::optional<std::string>& instruction, bool not_issued,
                 uint64_t code_object, uint32_t function_index, uint64_t range_id,
                 uint64_t correlation_id) {
    Record r = base(RecordKind::kPcSample, 0, start, end, std::string("PC_SAMPLING"), kernel,
                    correlation_id);
    PcSampleData& p = r.pc;
    p.code_object = code_object;
    p.pc_offset = pc_offset;
    p.samples = samples;
    p.range_id = range_id;
    p.agent_id = agent;
    p.stall_reason_id = opt_string(stall_reason);
    p.source_file_id = opt_string(source_file);
    p.line = line;
    p.instruction_id = opt_string(instruction);
    p.function_index = function_index;
    p.flags = not_issued ? kPcSampleNotIssued : 0;
    write(r);
  }

  uint32_t pmc_key(uint32_t id) { return string("pmc:fixture:" + std::to_string(id)); }

  void thread_name(uint32_t tid, const std::string& name, uint64_t timestamp) {
    Record r = base(RecordKind::kThreadName, tid, timestamp, timestamp, std::nullopt, name, 0);
    write(r);
  }

  void commit() {
    check();
    sink_.commit();
  }

  // end != 0: the session's end (process fini/end, and the end of every thread still open),
  // as a session's stop writes it; 0 leaves them 0.
  std::string close(uint64_t end) {
    if (open_) {
      open_ = false;
      sink_.close(end);
      if (!sink_.storage_failure().empty())
        throw std::runtime_error(info_.path + ": " + sink_.storage_failure());
    }
    return info_.path;
  }

 private:
  void check() const {
    if (!open_) throw std::runtime_error("the fixture writer is closed");
  }
  void info(const InfoRow& row) {
    check();
    sink_.write_info(row);
  }
  void write(const Record& r) {
    check();
    sink_.write_records(&r, 1);
  }
  Record base(RecordKind kind, uint32_t tid, uint64_t start, uint64_t end,
              const std::optional<std::string>& category, const std::optional<std::string>& name,
              uint64_t corr) {
    Record r{};
    r.kind = kind;
    r.tid = tid;
    r.start = start;
    r.end = end;
    r.category_id = opt_string(category);
    r.name_id = opt_string(name);
    r.correlation_id = corr;
    return r;
  }
  uint32_t kernel_name_id(uint32_t kernel_id) {
    const auto it = kernel_names_.find(kernel_id);
    if (it == kernel_names_.end())
      throw std::invalid_argument("kernel " + std::to_string(kernel_id) +
                                  ": write its kernel_symbol first");
    return it->second;
  }
  static void dim3(const Dim3& v, uint32_t* out, const char* what) {
    if (v.size() != 3) throw std::invalid_argument(std::string(what) + " must have three values");
    for (int i = 0; i < 3; ++i) out[i] = v[i];
  }
  // "" = not recorded; otherwise the extdata name (PAGEABLE, PINNED, DEVICE, ARRAY, MANAGED).
  static uint8_t memory_kind(const std::string& v) {
    static const char* const kKinds[] = {"", "PAGEABLE", "PINNED", "DEVICE", "ARRAY", "MANAGED"};
    return static_cast<uint8_t>(index_of(kKinds, 6, v, "memory kind"));
  }
  static uint32_t index_of(const char* const* names, uint32_t n, const std::string& v,
                           const char* what) {
    for (uint32_t i = 0; i < n; ++i)
      if (v == names[i]) return i;
    throw std::invalid_argument(std::string("unknown ") + what + ": " + v);
  }

  SessionInfo info_;
  RocpdSink sink_;
  bool open_ = false;
  std::unordered_map<std::string, uint32_t> strings_;
  std::unordered_map<uint32_t, uint32_t> kernel_names_;  // kernel id -> display name's string
  uint32_t callsites_ = 0;                               // call site ids given so far
  uint64_t bulk_dispatches_ = 0;
};

void bind(py::module_& m) {
  using W = FixtureWriter;
  const std::map<std::string, std::string> no_metadata;
  py::class_<W>(m, "_FixtureWriter",
                "internal (tests): a rocpd database written by the real writer from given rows")
      .def_property_readonly("guid", &W::guid)
      .def_property_readonly("path", &W::path)
      .def_property_readonly("suffix", &W::suffix)
      .def_property_readonly("pid", &W::pid)
      .def("string", &W::string, py::arg("text"))
      .def("agent", &W::agent, py::arg("id"), py::kw_only(), py::arg("type") = "GPU",
           py::arg("absolute_index") = 0, py::arg("logical_index") = 0, py::arg("type_index") = 0,
           py::arg("uuid") = "", py::arg("name") = "", py::arg("model_name") = "",
           py::arg("vendor_name") = "", py::arg("product_name") = "", py::arg("user_name") = "",
           py::arg("extdata") = "{}")
      .def("stream", &W::stream, py::arg("id"), py::arg("name"), py::kw_only(),
           py::arg("extdata") = "{}", py::arg("queue") = false)
      .def("kernel_symbol", &W::kernel_symbol, py::arg("id"), py::arg("kernel_name"), py::kw_only(),
           py::arg("display_name") = "", py::arg("kernel_object") = 0,
           py::arg("kernarg_segment_size") = 0, py::arg("kernarg_segment_alignment") = 0,
           py::arg("group_segment_size") = 0, py::arg("private_segment_size") = 0,
           py::arg("sgpr_count") = 0, py::arg("arch_vgpr_count") = 0,
           py::arg("accum_vgpr_count") = 0, py::arg("extdata") = "{}")
      .def("thread", &W::thread, py::arg("tid"), py::arg("name") = "", py::kw_only(),
           py::arg("start") = 0, py::arg("end") = 0)
      .def("metadata", &W::metadata, py::arg("tag"), py::arg("value"))
      .def("stack", &W::stack, py::arg("id"), py::arg("parent_id"), py::kw_only(),
           py::arg("category") = py::none(), py::arg("call_stack") = "{}",
           py::arg("line_info") = "{}")
      .def("callsite", &W::callsite, py::arg("site"), py::arg("callers"))
      .def("region", &W::region, py::arg("category"), py::arg("name"), py::arg("start"),
           py::arg("end"), py::kw_only(), py::arg("tid"), py::arg("correlation_id") = 0,
           py::arg("message") = py::none(), py::arg("instant") = false,
           py::arg("open_at_exit") = false, py::arg("extdata") = py::none(),
           py::arg("range_corr") = 0, py::arg("external_id") = 0,
           py::arg("region_name") = py::none(), py::arg("callsite") = 0)
      .def("collective", &W::collective, py::arg("name"), py::arg("start"), py::arg("end"),
           py::kw_only(), py::arg("tid"), py::arg("count"), py::arg("bytes"), py::arg("datatype"),
           py::arg("comm"), py::arg("rank"), py::arg("nranks"), py::arg("root") = -1,
           py::arg("peer") = -1, py::arg("stream") = 0, py::arg("seq") = UINT64_MAX,
           py::arg("algo") = py::none(), py::arg("proto") = py::none(), py::arg("nchannels") = 0)
      .def("kernel", &W::kernel, py::arg("kernel_id"), py::arg("start"), py::arg("end"),
           py::kw_only(), py::arg("tid"), py::arg("agent"), py::arg("stream") = 0,
           py::arg("queue") = 0, py::arg("correlation_id") = 0, py::arg("dispatch_id") = 0,
           py::arg("grid") = Dim3{1, 1, 1}, py::arg("block") = Dim3{1, 1, 1},
           py::arg("static_shared") = 0, py::arg("dynamic_shared") = 0,
           py::arg("local_per_thread") = 0, py::arg("registers") = 0,
           py::arg("region_name") = py::none(), py::arg("callsite") = 0, py::arg("range_corr") = 0,
           py::arg("category") = "KERNEL_DISPATCH")
      .def("kernels", &W::kernels, py::arg("rows"), py::kw_only(), py::arg("tid"), py::arg("agent"),
           py::arg("stream") = 0, py::arg("grid") = Dim3{1, 1, 1}, py::arg("block") = Dim3{1, 1, 1})
      .def("memory_copy", &W::memory_copy, py::arg("name"), py::arg("start"), py::arg("end"),
           py::arg("bytes"), py::kw_only(), py::arg("tid"), py::arg("src_agent"),
           py::arg("dst_agent"), py::arg("src_address") = 0, py::arg("dst_address") = 0,
           py::arg("stream") = 0, py::arg("queue") = 0, py::arg("correlation_id") = 0,
           py::arg("memset") = false, py::arg("value") = 0, py::arg("region_name") = py::none(),
           py::arg("callsite") = 0, py::arg("range_corr") = 0, py::arg("category") = "MEMORY_COPY",
           py::arg("src_memory") = "", py::arg("dst_memory") = "")
      .def("allocation", &W::allocation, py::arg("type"), py::arg("start"), py::arg("end"),
           py::arg("bytes"), py::kw_only(), py::arg("tid"), py::arg("agent"),
           py::arg("level") = "REAL", py::arg("address") = 0, py::arg("stream") = 0,
           py::arg("correlation_id") = 0, py::arg("range_corr") = 0,
           py::arg("category") = "MEMORY_ALLOCATION")
      .def("sample", &W::sample, py::arg("timestamp"), py::kw_only(), py::arg("tid"),
           py::arg("category") = "PYTHON_SAMPLE", py::arg("stack_id") = 0, py::arg("track_id") = 0,
           py::arg("value") = std::nan(""), py::arg("extdata") = py::none(),
           py::arg("correlation_id") = 0)
      .def("pmc_info", &W::pmc_info, py::arg("id"), py::arg("name"), py::kw_only(),
           py::arg("agent"), py::arg("description") = "", py::arg("units") = "",
           py::arg("component") = "cupti", py::arg("block") = "", py::arg("expression") = "",
           py::arg("is_constant") = false, py::arg("is_derived") = false,
           py::arg("value_type") = "ABS", py::arg("extdata") = "{}")
      .def("pmc_value", &W::pmc_value, py::arg("correlation_id"), py::arg("pmc_id"),
           py::arg("value"), py::kw_only(), py::arg("agent"), py::arg("alt_correlation_id") = 0)
      .def("pc_sample", &W::pc_sample, py::arg("kernel"), py::arg("pc_offset"), py::arg("samples"),
           py::kw_only(), py::arg("start"), py::arg("end"), py::arg("agent"),
           py::arg("stall_reason") = py::none(), py::arg("source_file") = py::none(),
           py::arg("line") = 0, py::arg("instruction") = py::none(), py::arg("not_issued") = false,
           py::arg("code_object") = 0, py::arg("function_index") = 0, py::arg("range_id") = 0,
           py::arg("correlation_id") = 0)
      .def("name_object", &W::name_object, py::arg("target"), py::arg("object"), py::arg("name"),
           py::kw_only(), py::arg("tid"))
      .def("thread_name", &W::thread_name, py::arg("tid"), py::arg("name"),
           py::arg("timestamp") = 0)
      .def("commit", &W::commit)
      .def("close", &W::close, py::arg("end") = 0);
  m.def(
      "_fixture_writer",
      [](const std::string& path, const std::optional<std::string>& guid, uint32_t pid,
         uint32_t ppid, const std::string& hostname, const std::string& command,
         const std::string& environment, const std::map<std::string, std::string>& metadata,
         uint64_t init, uint64_t start, const std::string& options, const std::string& cpu_model,
         const std::string& machine_id, const std::string& system_name, bool kernel_rename,
         bool guid_per_row) {
        return new FixtureWriter(path, guid, pid, ppid, hostname, command, environment, metadata,
                                 init, start, options, cpu_model, machine_id, system_name,
                                 kernel_rename, guid_per_row);
      },
      py::return_value_policy::take_ownership, py::arg("path"), py::arg("guid") = py::none(),
      py::kw_only(), py::arg("pid"), py::arg("ppid") = 1, py::arg("hostname") = "host0",
      py::arg("command") = "", py::arg("environment") = "{}", py::arg("metadata") = no_metadata,
      py::arg("init") = 0, py::arg("start") = 0, py::arg("options") = "{}",
      py::arg("cpu_model") = "", py::arg("machine_id") = "", py::arg("system_name") = "Linux",
      py::arg("kernel_rename") = false, py::arg("guid_per_row") = false,
      "internal (tests): opens a new rocpd database at `path` written by the real writer "
      "(RocpdSink); every row's values come from the caller. Close it with close().");
  // The agent numbering every backend uses (rocprof/info.hpp): CPU 1, GPU n at 2 + n.
  m.attr("_CPU_AGENT_ID") = kCpuAgentId;
  m.def("_gpu_agent_id", &gpu_agent_id, py::arg("device_ordinal"),
        "internal (tests): rocpd_info_agent.id of the GPU with this device ordinal");
}

rocprof::bindings::RegisterDeferred g_register({"_FixtureWriter", "_fixture_writer",
                                                "_CPU_AGENT_ID", "_gpu_agent_id"},
                                               bind);

}  // namespace
