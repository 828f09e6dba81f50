// Every record type that travels from a producer to the drain thread.
//
// Records are fixed-size PODs (128 bytes) so a producer writes one slot of its thread's ring
// with plain stores: no allocation, no locks, no string copies. Strings are interned once
// (buffer/string_table.hpp) and records carry their 32-bit ids; id 0 means "none".
// Change a layout => bump kRecordFormatVersion (stored in the database metadata).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace rocprof {

inline constexpr uint32_t kRecordFormatVersion = 8;  // 2: callsite_id on kernels/copies
                                                     // 3: callsite_id on regions, copy memory kinds
                                                     // 4: range_corr, RegionData::message_id
                                                     // 5: counter samples (kFlagCounter, pmc_key)
                                                     // 6: per-dispatch counters (kPmcValue)
                                                     // 7: PC samples (kPcSample)
                                                     // 7: KernelData graph_id, graph_node_id
                                                     // 7: collective calls (kCollective)
                                                     // 7: PcSampleData dispatch_id, wave state
                                                     // 8: AllocData callsite, site key, stream
                                                     //    handle, device_free (allocator events)
inline constexpr std::size_t kRecordSize = 128;

enum class RecordKind : uint16_t {
  kNone = 0,
  kRegion = 1,          // CPU-side interval: ROCTx range, runtime/driver API call
  kKernelDispatch = 2,  // GPU kernel execution
  kMemoryCopy = 3,      // GPU memory copy (or memset: flags & kFlagMemset)
  kMemoryAlloc = 4,     // device allocation / free
  kSample = 5,          // one timestamp on a track: call-stack or counter sample
  kThreadName = 6,      // rename of the recording thread (name_id)
  kName = 7,            // ROCTx name of a device, stream or HSA agent (NameData, name_id)
  kPmcValue = 8,        // one hardware counter value of one kernel dispatch (PmcData)
  kPcSample = 9,        // samples of one instruction in one stall reason (PcSampleData)
  kCollective = 10,     // NCCL/RCCL collective or point-to-point call (CollectiveData)
};

// What roctxNameHipDevice / roctxNameHipStream / roctxNameHsaAgent name (NameData::target).
enum NameTarget : uint32_t { kNameHipDevice = 1, kNameHipStream = 2, kNameHsaAgent = 3 };

enum RecordFlags : uint16_t {
  kFlagNone = 0,
  kFlagMemset = 1u << 0,      // kMemoryCopy used for a memset: dst only, size = bytes set
  kFlagInstant = 1u << 1,     // kRegion with start == end (roctxMark): stored as a sample
  kFlagMessage = 1u << 2,     // ROCTx kRegion: name_id is the API function, region.message_id
                              // the message (rocpd: event extdata {"message": ...})
  kFlagOpenAtExit = 1u << 3,  // kRegion still open when the session ended: end = stop time
  // kSample holding a counter value (capture/metrics/): name_id is the track's name,
  // sample.pmc_key the PmcInfo it is a value of, sample.value the value.
  kFlagCounter = 1u << 4,
  // start/end are CPU time-stamp counter readings (ROCTx, where tsc_stamps()): the drain maps
  // them to CLOCK_BOOTTIME and clears the flag before any sink sees the record.
  kFlagTscTime = 1u << 5,
  // kMemoryAlloc whose Python line is still a launch-site key (alloc.site_key): the drain
  // resolves it to alloc.callsite_id and clears the flag before any sink sees the record.
  kFlagSiteKey = 1u << 6,
  // kMemoryAlloc of an out-of-memory: alloc.bytes is the request that failed, alloc.device_free
  // what the driver said was free (rocpd: extdata {"device_free": ...}).
  kFlagAllocOom = 1u << 7,
};

// Payloads. All integer fields, natural alignment, no padding surprises (checked below).
// The correlation id of the innermost enclosing ROCTx range (0: none) is `range_corr` on every
// record a launch or an API call makes: stored as rocpd_event.parent_stack_id, it points at
// that range's rocpd_region row (whose id is its correlation id, as ROCm keys regions).
struct RegionData {
  uint64_t range_corr;  // innermost enclosing ROCTx range (a range: the one around it)
  uint64_t reserved0;
  uint64_t external_id;
  uint32_t extdata_id;      // interned JSON text for rocpd_event.extdata (0: derived by sink)
  uint32_t region_name_id;  // innermost enclosing ROCTx range's message
  uint32_t message_id;      // ROCTx: the message (name_id is the API function)
  uint32_t callsite_id;     // API calls: as KernelData::callsite_id (which Python line waited)
};

struct KernelData {
  uint32_t agent_id;  // device ordinal (rocpd_info_agent.id by convention of the backend)
  uint32_t stream_id;
  uint32_t queue_id;
  uint32_t kernel_id;  // rocpd_info_kernel_symbol.id
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t static_shared;  // group_segment_size
  uint32_t dynamic_shared;
  uint32_t local_per_thread;  // private_segment_size
  uint32_t registers;
  uint32_t region_name_id;  // innermost enclosing ROCTx range
  uint32_t callsite_id;     // the launching Python frames: a CallsiteInfo id (0: none)
  uint64_t dispatch_id;
  uint64_t range_corr;  // innermost enclosing ROCTx range at launch
  // A kernel of a CUDA graph replay: the graph's id (CUPTI's) and its node's number in the
  // session (from 1; CUPTI's node ids are 64-bit). 0: not launched by a graph.
  // With --graph-trace graph, a whole replay is one kKernelDispatch with graph_node_id 0.
  uint32_t graph_id;
  uint32_t graph_node_id;
};

// Where a copy's bytes live: a host copy from pageable memory is staged and blocks the host.
enum class MemoryKind : uint8_t {
  kUnknown = 0,
  kPageable = 1,
  kPinned = 2,
  kDevice = 3,
  kArray = 4,
  kManaged = 5,
};

struct CopyData {
  uint32_t src_agent_id;
  uint32_t dst_agent_id;
  uint32_t stream_id;
  uint32_t queue_id;
  uint64_t src_address;
  uint64_t dst_address;
  uint64_t bytes;
  uint32_t region_name_id;
  uint32_t value;        // memset byte value
  uint64_t range_corr;   // innermost enclosing ROCTx range at launch
  uint32_t callsite_id;  // as KernelData::callsite_id
  uint8_t src_memory;    // MemoryKind of each side (kUnknown where the runtime does not say)
  uint8_t dst_memory;
  uint16_t reserved;
};

// A device allocation or free: the runtime's (level REAL, category MEMORY_ALLOCATION) or a
// caching allocator's action (level VIRTUAL, category TORCH_ALLOCATOR_*: docs/rocpd-schema.md).
struct AllocData {
  uint32_t agent_id;
  uint32_t stream_id;
  uint32_t op;     // 0 ALLOC, 1 FREE, 2 REALLOC, 3 RECLAIM
  uint32_t level;  // 0 REAL, 1 VIRTUAL, 2 SCRATCH
  uint64_t address;
  uint64_t bytes;
  uint64_t range_corr;
  uint32_t callsite_id;  // as KernelData::callsite_id (0: none, or not resolved yet)
  uint32_t reserved;
  uint64_t site_key;       // kFlagSiteKey: the launch-site key the drain resolves
  uint64_t stream_handle;  // the stream as the allocating library named it (0: default)
  uint64_t device_free;    // kFlagAllocOom: bytes the driver said were free
};

struct NameData {
  uint64_t object;  // device ordinal, or the stream / agent handle's value
  uint32_t target;  // NameTarget
  uint32_t reserved;
};

struct SampleData {
  uint64_t track_id;  // rocpd_track id (sink maps tid → track when 0)
  uint64_t stack_id;
  double value;  // counter value (NaN for stack samples)
  uint32_t extdata_id;
  uint32_t pmc_key;  // kFlagCounter: PmcInfo::key of the counter (0 otherwise)
};

// A counter value of the dispatch whose kernel record has this record's correlation_id (the
// sink pairs them, whichever arrives first). alt_correlation_id: the launch's other id (the
// driver call's, when the runtime's is the primary one), tried when the first finds nothing.
struct PmcData {
  uint32_t pmc_key;   // PmcInfo::key of the counter (the writer maps it to rocpd_info_pmc.id)
  uint32_t agent_id;  // the GPU agent the value was read on
  double value;
  uint64_t alt_correlation_id;
};

// PC sampling: how many samples landed on one instruction of one kernel with one stall reason
// during the collection window [start, end]. NVIDIA's hardware reports counts per (PC, stall
// reason), not single samples, so one record stands for `samples` of them; AMD's
// (rocprofiler-sdk) reports single samples: samples = 1, start = end = the sample's time.
// name_id: the kernel's (mangled) function name; correlation_id: its dispatch's, where the
// collection mode knows it (0 in CUPTI's continuous mode). Strings are interned ids (0: unknown).
struct PcSampleData {
  uint64_t code_object;  // NVIDIA: the cubin's CRC (CUPTI's cubinCrc); AMD: code object id
  uint64_t pc_offset;    // offset of the instruction in its function (NVIDIA) / code object
  uint64_t samples;
  uint64_t range_id;         // the collector's window number (CUPTI's rangeId)
  uint32_t agent_id;         // rocpd_info_agent id of the GPU
  uint32_t stall_reason_id;  // e.g. "long_scoreboard" (0: none reported)
  uint32_t source_file_id;   // from the binary's line info
  uint32_t line;             // 0: no line info
  uint32_t instruction_id;   // SASS/ISA text, where known
  uint32_t function_index;   // the function's index in its module
  uint32_t flags;            // PcSampleFlags (below)
  uint32_t inst_type_id;     // kPcSampleWaveState: the instruction's type ("valu", "lds", ...)
  uint64_t dispatch_id;      // the kernel dispatch's rocpd dispatch_id (0: not known)
  uint64_t exec_mask;        // kPcSampleExecMask: the wave's active lanes
  uint32_t wave_count;       // kPcSampleWaveState: waves active on the compute unit
  uint32_t reserved;
};
enum PcSampleFlags : uint32_t {
  // NVIDIA reports each stall reason twice: all samples of the reason, and (CUPTI's
  // "_not_issued" twin) the subset in which the warp issued no instruction. Totals count the
  // records without this flag.
  kPcSampleNotIssued = 1u << 0,
  kPcSampleExecMask = 1u << 1,   // exec_mask holds the sampled wave's active lanes (AMD)
  kPcSampleWaveState = 1u << 2,  // wave_count, inst_type_id and kPcSampleIssued hold (AMD
                                 // stochastic sampling)
  kPcSampleIssued = 1u << 3,     // kPcSampleWaveState: the wave issued the sampled instruction
};
// One collective (or send/recv) call as the communication library's profiler interface
// describes it (capture/nccl/). name_id is the API function ("ncclAllReduce"); start/end the
// call on the calling thread. Stored as ROCm stores RCCL API calls: a rocpd_region of
// category RCCL_API with the arguments in rocpd_arg.
struct CollectiveData {
  uint64_t count;         // elements, as the call passed them
  uint64_t bytes;         // count x the datatype's size (0: size of the datatype unknown)
  uint64_t comm_hash;     // the communicator's id (same on every rank of it)
  uint64_t stream;        // the stream handle the call was issued on (0: not told)
  uint64_t seq;           // per-communicator, per-operation sequence number (UINT64_MAX: not told)
  int32_t root;           // root rank (broadcast, reduce), -1 otherwise
  int32_t peer;           // peer rank (send, recv), -1 otherwise
  int32_t rank;           // this rank in the communicator
  int32_t nranks;         // ranks in the communicator
  uint32_t datatype_id;   // interned "ncclFloat32", ...
  uint32_t algo_id;       // interned algorithm ("Ring", "Tree", ...; 0: not told)
  uint32_t proto_id;      // interned protocol ("Simple", "LL", "LL128"; 0: not told)
  uint32_t comm_name_id;  // interned communicator name (0: none)
  uint16_t nchannels;
  uint16_t nnodes;
  uint32_t reserved;
};

struct Record {
  RecordKind kind;
  uint16_t flags;
  uint32_t tid;          // OS thread id of the producing (or launching) thread
  uint64_t start;        // CLOCK_BOOTTIME ns
  uint64_t end;          // == start for instants and samples
  uint32_t category_id;  // interned domain name, e.g. "MARKER_CORE_API"
  uint32_t name_id;      // interned name: message, API function, kernel, copy direction
  uint64_t correlation_id;
  union {
    RegionData region;
    KernelData kernel;
    CopyData copy;
    AllocData alloc;
    SampleData sample;
    NameData name;
    PmcData pmc;
    PcSampleData pc;
    CollectiveData coll;
    unsigned char raw[88];
  };
};

static_assert(std::is_trivially_copyable_v<Record>, "records are copied as bytes");
static_assert(std::is_standard_layout_v<Record>, "records are read by offset");
static_assert(sizeof(Record) == kRecordSize, "ring slots are 128 bytes");
static_assert(sizeof(RegionData) <= 88 && sizeof(KernelData) <= 88 && sizeof(CopyData) <= 88 &&
                  sizeof(AllocData) <= 88 && sizeof(SampleData) <= 88 && sizeof(PmcData) <= 88 &&
                  sizeof(PcSampleData) <= 88 && sizeof(CollectiveData) <= 88,
              "payloads fit the slot");
static_assert(offsetof(Record, raw) == 40, "header is 40 bytes");

// A record with its header set and every payload byte zero (the backends fill the payload).
inline Record make_record(RecordKind kind, uint64_t start, uint64_t end, uint32_t tid,
                          uint32_t category_id, uint64_t correlation_id) noexcept {
  Record r;
  std::memset(&r, 0, sizeof r);
  r.kind = kind;
  r.tid = tid;
  r.start = start;
  r.end = end;
  r.category_id = category_id;
  r.correlation_id = correlation_id;
  return r;
}

// One value of a sampled counter (kFlagCounter) at `t` on the track interned as `track_name_id`,
// of the PmcInfo whose key is `pmc_key`: what the device-metrics and PM-sampling threads emit.
inline Record counter_sample(uint64_t t, uint32_t tid, uint32_t category_id, uint32_t track_name_id,
                             uint32_t pmc_key, double value) noexcept {
  Record r = make_record(RecordKind::kSample, t, t, tid, category_id, 0);
  r.flags = kFlagCounter;
  r.name_id = track_name_id;
  r.sample.value = value;
  r.sample.pmc_key = pmc_key;
  return r;
}

}  // namespace rocprof
