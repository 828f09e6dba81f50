// What a session can record: the one vocabulary from the command line to the backends. The
// launcher maps its options to activities (python/rocprof/cli/option_table.py); each backend
// states which activities it serves (its settings' kSupported) and maps each to its own calls
// in one place (CUPTI: the activity kinds it enables; HSA/HIP: its tables). Python sees the
// same list as rocprof._core.Activity.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace rocprof {

// X(name, description): the name is the activity's one spelling everywhere (text settings
// "cupti.kernels=1", Python "kernels"); append only, the order is the bit position.
#define ROCPROF_ACTIVITIES(X)                                        \
  X(kernels, "GPU kernel dispatches")                                \
  X(copies, "GPU memory copies")                                     \
  X(sets, "GPU memory sets")                                         \
  X(allocations, "GPU memory allocations and frees")                 \
  X(runtime_api, "GPU runtime API calls (CUDA runtime; HIP on AMD)") \
  X(driver_api, "GPU driver API calls (CUDA driver)")                \
  X(sync, "GPU synchronisations (stream, event, device)")            \
  X(hip_api, "HIP runtime API calls (AMD)")                          \
  X(hsa_api, "HSA API calls (AMD)")                                  \
  X(markers, "ROCTx ranges and marks")                               \
  X(counters, "per-kernel hardware counters (PMC)")                  \
  X(samples, "call-stack samples")                                   \
  X(metrics, "device and host metrics over time")                    \
  X(pc_samples, "GPU program-counter samples (PC sampling)")         \
  X(collectives, "collective communication calls (NCCL/RCCL)")       \
  X(gpu_metrics, "GPU hardware metrics over time (PM sampling)")     \
  X(allocator, "PyTorch caching-allocator actions")

enum class Activity : uint8_t {
#define ROCPROF_ACTIVITY_ENUM(name, description) name,
  ROCPROF_ACTIVITIES(ROCPROF_ACTIVITY_ENUM)
#undef ROCPROF_ACTIVITY_ENUM
      count
};

struct ActivityInfo {
  Activity id;
  const char* name;
  const char* description;
};

inline constexpr ActivityInfo kActivities[] = {
#define ROCPROF_ACTIVITY_INFO(name, description) {Activity::name, #name, description},
    ROCPROF_ACTIVITIES(ROCPROF_ACTIVITY_INFO)
#undef ROCPROF_ACTIVITY_INFO
};
static_assert(sizeof(kActivities) / sizeof(kActivities[0]) == static_cast<size_t>(Activity::count),
              "one row per activity");
static_assert(static_cast<size_t>(Activity::count) <= 32, "ActivitySet is 32 bits");

// A set of activities (a bit per activity): what a backend records, or what it can.
class ActivitySet {
 public:
  constexpr ActivitySet() = default;
  constexpr ActivitySet(std::initializer_list<Activity> list) {
    for (Activity a : list) bits_ |= bit(a);
  }
  constexpr bool has(Activity a) const { return (bits_ & bit(a)) != 0; }
  constexpr void set(Activity a, bool on) { bits_ = on ? bits_ | bit(a) : bits_ & ~bit(a); }
  constexpr uint32_t bits() const { return bits_; }
  constexpr bool operator==(const ActivitySet& o) const { return bits_ == o.bits_; }

 private:
  static constexpr uint32_t bit(Activity a) { return 1u << static_cast<uint32_t>(a); }
  uint32_t bits_ = 0;
};

inline const char* activity_name(Activity a) { return kActivities[static_cast<size_t>(a)].name; }

// false: no activity of that name.
inline bool parse_activity(std::string_view name, Activity* out) {
  for (const ActivityInfo& info : kActivities)
    if (name == info.name) return *out = info.id, true;
  return false;
}

}  // namespace rocprof
