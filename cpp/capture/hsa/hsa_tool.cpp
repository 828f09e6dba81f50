// The HSA runtime's dispatch table: the layout check OnLoad applies, and HSA API tracing
// (--hsa-trace) by wrapping every entry of the core and AMD-extension tables.
//
// Layout: each sub-table starts with {major_id, minor_id = sizeof(table), step_id}. ROCm 5.6
// inserted two AMD-extension entries mid-table without changing major_id, so a newer table is
// not "ours plus entries at the end": a table is used only when its major id and size equal
// those of the headers this build was compiled with; anything else is refused in one line and
// the runtime runs untouched (CPU-side profiling carries on).
//
// Tracing: one wrapper per entry, generated from the header's own list of entries
// (hsa_api_list.inc, made by CMake from hsa_api_trace.h), so the wrapped set always matches the
// compiled layout. A wrapper costs one relaxed load when tracing is off.
#include <cstring>
#include <string>
#include <type_traits>

#include "capture/context.hpp"
#include "capture/markers/markers.hpp"
#include "hsa_state.hpp"
#include "rocprof/clock.hpp"

namespace rocprof::hsa {
namespace {

enum TableKind : uint8_t { kCore = 0, kAmd = 1 };

struct Entry {
  const char* name;
  TableKind table;
};

// Names of the wrapped entries in the order of hsa_api_list.inc; the wrappers index them.
constexpr Entry kEntries[] = {
#define ROCPROF_HSA_CORE(name) {#name, kCore},
#define ROCPROF_HSA_AMD(name) {#name, kAmd},
#include "hsa_api_list.inc"
#undef ROCPROF_HSA_CORE
#undef ROCPROF_HSA_AMD
};
constexpr uint32_t kEntryCount = sizeof(kEntries) / sizeof(kEntries[0]);

// Interned per session before tracing is switched on; read by every wrapper.
uint32_t g_name_ids[kEntryCount];
uint32_t g_category_ids[2];

void emit_api(uint32_t index, uint64_t corr, uint64_t start) noexcept {
  const uint64_t end = now_ns();
  CaptureContext* c = g_ctx.load(std::memory_order_acquire);
  if (c == nullptr || c->paused()) return;
  Record r = make_record(RecordKind::kRegion, start, end, os_tid(),
                         g_category_ids[kEntries[index].table], corr);
  r.name_id = g_name_ids[index];
  if (g_on.region.load(std::memory_order_relaxed))
    r.region.region_name_id = markers::current_range(&r.region.range_corr);
  c->emit(r);
}

template <auto Member>
struct Wrapper;

// Member: pointer to a table entry, e.g. &CoreApiTable::hsa_queue_create_fn.
template <class Table, class R, class... A, R (*Table::*Member)(A...)>
struct Wrapper<Member> {
  static inline R (*next)(A...) = nullptr;
  static inline uint32_t index = 0;
  static R call(A... a) {
    if (!g_on.hsa_api.load(std::memory_order_relaxed)) return next(a...);
    const uint64_t corr = next_correlation();
    const uint64_t start = now_ns();
    if constexpr (std::is_void_v<R>) {
      next(a...);
      emit_api(index, corr, start);
    } else {
      R r = next(a...);
      emit_api(index, corr, start);
      return r;
    }
  }
  static void install(Table* table, uint32_t i) {
    R (*current)(A...) = __atomic_load_n(&(table->*Member), __ATOMIC_ACQUIRE);
    if (current == nullptr || current == &call) return;  // absent in this runtime, or done
    next = current;
    index = i;
    __atomic_store_n(&(table->*Member), &call, __ATOMIC_RELEASE);
  }
};

bool g_api_installed = false;

std::string layout_of(const char* which, const ApiTableVersion& v) {
  return std::string(which) + " v" + std::to_string(v.major_id) + ", " +
         std::to_string(v.minor_id) + " bytes";
}

}  // namespace

bool check_layout(const HsaApiTable* t, std::string* why) {
  const char* fix =
      ": AMD GPU tracing off, CPU-side profiling continues (rebuild rocprof against this ROCm's "
      "headers to trace it)";
  if (t == nullptr || t->version.major_id != HSA_API_TABLE_MAJOR_VERSION ||
      t->version.minor_id < sizeof(HsaApiTable)) {
    *why = "HSA API table of an unknown layout (" +
           (t ? layout_of("HsaApiTable", t->version) : std::string("none")) +
           "; this build knows " + "v" + std::to_string(HSA_API_TABLE_MAJOR_VERSION) + ", " +
           std::to_string(sizeof(HsaApiTable)) + " bytes)" + fix;
    return false;
  }
  struct Sub {
    const char* name;
    const ApiTableVersion* v;
    uint32_t major;
    size_t size;
  } subs[] = {
      {"CoreApiTable", t->core_ ? &t->core_->version : nullptr, HSA_CORE_API_TABLE_MAJOR_VERSION,
       sizeof(CoreApiTable)},
      {"AmdExtTable", t->amd_ext_ ? &t->amd_ext_->version : nullptr,
       HSA_AMD_EXT_API_TABLE_MAJOR_VERSION, sizeof(AmdExtTable)},
  };
  for (const Sub& s : subs) {
    if (s.v != nullptr && s.v->major_id == s.major && s.v->minor_id == s.size) continue;
    *why = std::string("HSA API table of an unknown layout (") +
           (s.v ? layout_of(s.name, *s.v) : std::string(s.name) + " missing") +
           "; this build knows v" + std::to_string(s.major) + ", " + std::to_string(s.size) +
           " bytes)" + fix;
    return false;
  }
  return true;
}

void install_api_tracing() {
  if (g_api_installed || g_rt.table == nullptr) return;
  g_api_installed = true;
  uint32_t i = 0;
  CoreApiTable* core = g_rt.table->core_;
  AmdExtTable* amd = g_rt.table->amd_ext_;
#define ROCPROF_HSA_CORE(name) Wrapper<&CoreApiTable::name##_fn>::install(core, i++);
#define ROCPROF_HSA_AMD(name) Wrapper<&AmdExtTable::name##_fn>::install(amd, i++);
#include "hsa_api_list.inc"
#undef ROCPROF_HSA_CORE
#undef ROCPROF_HSA_AMD
}

void api_tracing_names(CaptureContext& c) {
  // rocprofv3's domain names (rocpd_event category).
  g_category_ids[kCore] = c.intern("HSA_CORE_API");
  g_category_ids[kAmd] = c.intern("HSA_AMD_EXT_API");
  for (uint32_t i = 0; i < kEntryCount; ++i) g_name_ids[i] = c.intern(kEntries[i].name);
}

}  // namespace rocprof::hsa
