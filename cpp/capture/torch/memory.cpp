// The caching-allocator hook of rocprof._torch_observer; see memory.hpp for the design.
#include "capture/torch/memory.hpp"

#include <atomic>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>

#if defined(ROCPROF_TORCH_ALLOCATOR_CUDA)
#include <c10/cuda/CUDACachingAllocator.h>
namespace talloc = c10::cuda::CUDACachingAllocator;
#define ROCPROF_TORCH_ALLOCATOR 1
#elif defined(ROCPROF_TORCH_ALLOCATOR_HIP)  // ROCm torch: compiled, not yet run on AMD
#include <c10/hip/HIPCachingAllocator.h>
namespace talloc = c10::hip::HIPCachingAllocator;
#define ROCPROF_TORCH_ALLOCATOR 1
#endif

namespace rocprof::torch_observer::memory {
namespace {

std::atomic<const rp_launch_site_api*> g_api{nullptr};
std::atomic<bool> g_wanted{false};    // the memory capture started once in this process
std::atomic<bool> g_attached{false};  // the tracker is in (for the process's life)
std::mutex g_mu;                      // attach attempts (never the tracker's path)
std::string g_status = "none: the memory capture did not start";  // under g_mu

// g_mu held; _core is told after g_mu is released (report()): _core may hold its own lock
// while it asks us to attach (memory_on), so ours is never held while taking its.
void set_status(const std::string& s) { g_status = s; }

void report(const std::string& s) {
  if (const rp_launch_site_api* api = g_api.load()) api->memory_source(s.c_str());
}

#ifdef ROCPROF_TORCH_ALLOCATOR
constexpr int num(talloc::TraceEntry::Action a) { return static_cast<int>(a); }
static_assert(num(talloc::TraceEntry::ALLOC) == kAlloc &&
                  num(talloc::TraceEntry::FREE_REQUESTED) == kFreeRequested &&
                  num(talloc::TraceEntry::FREE_COMPLETED) == kFreeCompleted &&
                  num(talloc::TraceEntry::SEGMENT_ALLOC) == kSegmentAlloc &&
                  num(talloc::TraceEntry::SEGMENT_FREE) == kSegmentFree &&
                  num(talloc::TraceEntry::SEGMENT_MAP) == kSegmentMap &&
                  num(talloc::TraceEntry::SEGMENT_UNMAP) == kSegmentUnmap &&
                  num(talloc::TraceEntry::SNAPSHOT) == kSnapshot &&
                  num(talloc::TraceEntry::OOM) == kOom,
              "PyTorch's TraceEntry actions are numbered as memory.hpp says");

void tracker(const talloc::TraceEntry& te) {
  on_action(static_cast<int>(te.action_), static_cast<int>(te.device_),
            static_cast<uint64_t>(te.addr_), static_cast<uint64_t>(te.size_),
            reinterpret_cast<uint64_t>(te.stream_));
}

void attach_locked() {
  auto* a = talloc::get();
  if (a == nullptr) return set_status("none: torch has no CUDA caching allocator");
  if (!a->initialized()) {
    // Before CUDA's lazy init a tracker would be attached to no device: wait for it.
    return set_status("none: torch's CUDA allocator was never initialised (no CUDA tensor)");
  }
  try {
    talloc::attachAllocatorTraceTracker(&tracker);
  } catch (const std::exception& e) {
    std::string why = e.what();
    if (const size_t nl = why.find('\n'); nl != std::string::npos) why.resize(nl);
    std::fprintf(stderr,
                 "rocprof: PyTorch's %s allocator refused a trace hook: no allocator rows "
                 "(%s)\n",
                 a->name().c_str(), why.c_str());
    return set_status("none: torch's " + a->name() + " allocator has no trace hook (" + why + ")");
  }
  g_attached.store(true);
  set_status("torch-caching-allocator");
}
#endif

void memory_on() {  // the memory capture starts (under _core's lock: may report its source)
  g_wanted.store(true);
  try_attach();
}

}  // namespace

uint64_t block_size(uint64_t size) noexcept {
  constexpr uint64_t kMinBlock = 512;
  return size < kMinBlock ? kMinBlock : (size + kMinBlock - 1) / kMinBlock * kMinBlock;
}

void on_action(int action, int device, uint64_t addr, uint64_t size, uint64_t stream) noexcept {
  const rp_launch_site_api* api = g_api.load(std::memory_order_acquire);
  if (api == nullptr) return;
  rp_alloc_event e{};
  e.device = device;
  e.address = addr;
  e.size = size;
  e.stream = stream;
  switch (action) {
    case kAlloc:  // sizes are requests: allocated_bytes counts the rounded block
      e.kind = RP_ALLOC_BLOCK;
      e.size = block_size(size);
      break;
    case kFreeRequested:  // allocated_bytes drops here (FREE_COMPLETED: only cross-stream reuse)
      e.kind = RP_FREE_BLOCK;
      e.size = block_size(size);
      break;
    case kSegmentAlloc:
    case kSegmentMap:
      e.kind = RP_ALLOC_SEGMENT;
      break;
    case kSegmentFree:
    case kSegmentUnmap:
      e.kind = RP_FREE_SEGMENT;
      break;
    case kOom:
      e.kind = RP_ALLOC_OOM;
      e.address = 0;
      e.device_free = addr;
      break;
    default:
      return;  // FREE_COMPLETED, SNAPSHOT, annotations
  }
  api->memory_event(&e);
}

void attach(const rp_launch_site_api* api) {
  g_api.store(api);
  api->set_memory_listener(&memory_on);
}

void try_attach() {
  if (g_attached.load() || !g_wanted.load()) return;
  std::string now;
  {
    std::lock_guard<std::mutex> g(g_mu);
    if (g_attached.load()) return;
#ifdef ROCPROF_TORCH_ALLOCATOR
    attach_locked();
#else
    set_status("none: " ROCPROF_TORCH_ALLOCATOR_REASON);
#endif
    now = g_status;
  }
  report(now);
}

const char* status() {
  std::lock_guard<std::mutex> g(g_mu);
  static thread_local std::string copy;
  copy = g_status;
  return copy.c_str();
}

bool built() {
#ifdef ROCPROF_TORCH_ALLOCATOR
  return true;
#else
  return false;
#endif
}

}  // namespace rocprof::torch_observer::memory
