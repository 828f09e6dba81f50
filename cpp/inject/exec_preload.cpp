// librocprof_exec.so: the exec family of roctx/exec.cpp, preloaded by `rocprof run -- CMD` into
// the command's processes (LD_PRELOAD puts it ahead of libc for every object). Most of them
// never record: the hooks do nothing until a session of the process registers itself
// (session.cpp, at its first start), whichever library started it. Links only libc: the
// libraries that record are loaded by those that do.
#include <atomic>

#include "roctx/exec_hooks.hpp"

namespace {
using Hook = void (*)();
std::atomic<Hook> g_before{nullptr};
std::atomic<Hook> g_after_failed{nullptr};
}  // namespace

namespace rocprof::exec_hooks {
void before() {
  if (Hook h = g_before.load(std::memory_order_acquire)) h();
}
void after_failed() {
  if (Hook h = g_after_failed.load(std::memory_order_acquire)) h();
}
}  // namespace rocprof::exec_hooks

extern "C" __attribute__((visibility("default"))) void rocprof_exec_hooks(Hook before,
                                                                          Hook after_failed) {
  g_after_failed.store(after_failed, std::memory_order_release);
  g_before.store(before, std::memory_order_release);
}
