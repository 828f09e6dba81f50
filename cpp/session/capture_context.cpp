#include "session/capture_context.hpp"

#include "capture/markers/markers.hpp"
#include "session/session.hpp"

namespace rocprof::session {

bool SessionContext::emit(const Record& r) noexcept { return c_.emit(r); }

ThreadRecords* SessionContext::thread_records() noexcept {
  ThreadBuffer* b = c_.thread_buffer();
  return b != nullptr ? &b->ring : nullptr;
}

void SessionContext::emit_waiting(const Record& r) {
  ThreadBuffer* b = c_.thread_buffer();
  if (b == nullptr) return;
  // Past the budget the writer is behind: let it drain (returning chunks) and try again.
  for (int tries = 0; !b->ring.try_push(r); ++tries) {
    if (tries == 8) {  // the writer cannot keep up at all (a failed disk): count, move on
      b->ring.push(r);
      return;
    }
    c_.flush();
  }
}

uint32_t SessionContext::intern(std::string_view s) { return c_.strings().intern_cached(s); }

void SessionContext::info(InfoRow row) { c_.add_info(std::move(row)); }

void SessionContext::drops(const std::string& cause, uint64_t n) { c_.add_drops(cause, n); }

bool SessionContext::paused() const noexcept { return markers::paused(); }

void SessionContext::flush() { c_.flush(); }

void SessionContext::closed_at_exit(const Record& r) { c_.add_closed_at_exit(r); }

}  // namespace rocprof::session
