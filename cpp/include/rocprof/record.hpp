// Every record type that travels from a producer to the drain thread.
//
// Records are fixed-size PODs (128 bytes) so a producer writes one slot of its thread's ring
// with plain stores: no allocation, no locks, no string copies. Strings are interned once
// (buffer/string_table.hpp) and records carry their 32-bit ids; id 0 means "none".
// Change a layout => bump kRecordFormatVersion (stored in the database metadata).
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace rocprof {

inline constexpr uint32_t kRecordFormatVersion =
    3;  // 3: kPmcValue; 2: callsite_id on kernels/copies
inline constexpr std::size_t kRecordSize = 128;

enum class RecordKind : uint16_t {
  kNone = 0,
  kRegion = 1,          // CPU-side interval: ROCTx range, runtime/driver API call
  kKernelDispatch = 2,  // GPU kernel execution
  kMemoryCopy = 3,      // GPU memory copy (or memset: flags & kFlagMemset)
  kMemoryAlloc = 4,     // device allocation / free
  kSample = 5,          // one timestamp on a track: call-stack or counter sample
  kThreadName = 6,      // rename of the recording thread (name_id)
  kPmcValue = 7,        // one hardware counter value of one kernel dispatch (PmcData)
};

enum RecordFlags : uint16_t {
  kFlagNone = 0,
  kFlagMemset = 1u << 0,      // kMemoryCopy used for a memset: dst only, size = bytes set
  kFlagInstant = 1u << 1,     // kRegion with start == end (roctxMark)
  kFlagMessage = 1u << 2,     // kRegion whose name is a ROCTx message: extdata {"message": name}
  kFlagOpenAtExit = 1u << 3,  // kRegion still open when the session ended: end = stop time
};

// Payloads. All integer fields, natural alignment, no padding surprises (checked below).
struct RegionData {
  uint64_t stack_id;  // call stack (0: none), see rocpd_event.stack_id
  uint64_t parent_stack_id;
  uint64_t external_id;     // e.g. the ROCTx range id that encloses an API call
  uint32_t extdata_id;      // interned JSON text for rocpd_event.extdata (0: derived by sink)
  uint32_t region_name_id;  // innermost enclosing ROCTx range
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
  uint32_t callsite_id;     // interned JSON list of the launching Python frames (0: none)
  uint64_t dispatch_id;
  uint64_t stack_id;  // launch call stack
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
  uint32_t value;  // memset byte value
  uint64_t stack_id;
  uint32_t callsite_id;  // as KernelData::callsite_id
  uint32_t reserved;
};

struct AllocData {
  uint32_t agent_id;
  uint32_t stream_id;
  uint32_t op;     // 0 ALLOC, 1 FREE, 2 REALLOC, 3 RECLAIM
  uint32_t level;  // 0 REAL, 1 VIRTUAL, 2 SCRATCH
  uint64_t address;
  uint64_t bytes;
  uint64_t stack_id;
};

struct SampleData {
  uint64_t track_id;  // rocpd_track id (sink maps tid → track when 0)
  uint64_t stack_id;
  double value;  // counter value (NaN for stack samples)
  uint32_t extdata_id;
  uint32_t reserved;
};

// A counter value of the dispatch whose kernel record has this record's correlation_id (the
// sink pairs them, whichever arrives first). alt_correlation_id: the launch's other id (the
// driver call's, when the runtime's is the primary one), tried when the first finds nothing.
struct PmcData {
  uint32_t pmc_id;    // rocpd_info_pmc.id (PmcInfo::id)
  uint32_t agent_id;  // the GPU agent the value was read on
  double value;
  uint64_t alt_correlation_id;
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
    PmcData pmc;
    unsigned char raw[88];
  };
};

static_assert(std::is_trivially_copyable_v<Record>, "records are copied as bytes");
static_assert(std::is_standard_layout_v<Record>, "records are read by offset");
static_assert(sizeof(Record) == kRecordSize, "ring slots are 128 bytes");
static_assert(sizeof(RegionData) <= 88 && sizeof(KernelData) <= 88 && sizeof(CopyData) <= 88 &&
                  sizeof(AllocData) <= 88 && sizeof(SampleData) <= 88 && sizeof(PmcData) <= 88,
              "payloads fit the slot");
static_assert(offsetof(Record, raw) == 40, "header is 40 bytes");

}  // namespace rocprof
