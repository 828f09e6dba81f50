// What the session learns from, or does to, the operating system on the writer's behalf, so
// that buffer/ and storage/ do none of it (architecture.md: OS facts are gathered by
// session/). The session hands these to the Collector (CollectorOptions), which calls them on
// its drain thread.
#pragma once
#include <cstdint>
#include <string>

namespace rocprof::session {

// The kernel's name for thread `tid` of this process (/proc/self/task/<tid>/comm, what
// `top -H` shows), "" when the thread is gone or the file cannot be read.
std::string thread_name(uint32_t tid);
// The same for a thread of process `pid` (0: this process).
std::string thread_name(uint32_t pid, uint32_t tid);

}  // namespace rocprof::session
