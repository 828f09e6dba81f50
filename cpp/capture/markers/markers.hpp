// ROCTx semantics: push/pop ranges per thread, start/stop ranges that may end on another
// thread, instant marks, pause/resume, thread names. Shared by the Python roctx module and the
// C ABI in libroctx64.so. A capture backend like the others (it sees the session only through
// capture/context.hpp); every function is a cheap no-op when no session runs.
#pragma once
#include <cstdint>
#include <string_view>

namespace rocprof {
class CaptureContext;
}

namespace rocprof::markers {

inline constexpr const char* kCategory = "MARKER_CORE_API";

// Push with an already interned name (the Python module caches ids per name object).
int push_id(uint32_t name_id) noexcept;
int push(std::string_view message) noexcept;
// Ends the innermost push of this thread; returns the remaining depth, or -1 if none.
int pop() noexcept;
void mark(std::string_view message) noexcept;
uint64_t start(std::string_view message) noexcept;  // 0 when not recording
void stop(uint64_t range_id) noexcept;
void pause() noexcept;
void resume() noexcept;
void name_thread(std::string_view name) noexcept;
// roctxNameHipDevice / roctxNameHipStream / roctxNameHsaAgent: `target` a NameTarget, `object`
// the device ordinal or the handle's value. Stored as the user name of that agent / the name
// of that stream (rocpd_info_agent.user_name, rocpd_info_stream.name).
void name_object(uint32_t target, uint64_t object, std::string_view name) noexcept;
uint32_t thread_id() noexcept;
uint32_t intern(std::string_view s) noexcept;
// Innermost open push range of the calling thread: its message id (0: none), and its correlation
// id in *corr (0: none). GPU work launched here is attributed to it (its region name under
// --kernel-rename; rocpd_event.parent_stack_id -> the range's rocpd_region id).
uint32_t current_range(uint64_t* corr) noexcept;
// Session end (the markers backend's stop, after producers can no longer reach `c`): every
// push range of every thread and every start range still open becomes a record ending at
// `end_ns`, flagged kFlagOpenAtExit, so an unfinished range is stored and counted instead of
// vanishing.
void close_open_ranges(CaptureContext& c, uint64_t end_ns) noexcept;
// ROCTx calls that found no session while one was stopping (ranges pushed or started, marks):
// counted from the markers' stop until this call, which returns the count and ends the
// counting. A stop waits for its drain, and the program's threads may go on meanwhile.
uint64_t take_late_records() noexcept;
// roctxProfilerPause/Resume state, and whether ROCTx is being recorded (a session runs and
// is not paused).
bool paused() noexcept;
bool recording() noexcept;

}  // namespace rocprof::markers
