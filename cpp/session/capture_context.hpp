// The session's CaptureContext: the one door of capture/context.hpp, opened on the running
// collector. One per session, leaked with its collector (a backend thread may still hold it).
#pragma once
#include "buffer/collector.hpp"
#include "capture/context.hpp"

namespace rocprof::session {

class SessionContext final : public CaptureContext {
 public:
  explicit SessionContext(Collector& c) : c_(c) {}
  bool emit(const Record& r) noexcept override;
  ThreadRecords* thread_records() noexcept override;
  void emit_waiting(const Record& r) override;
  uint32_t intern(std::string_view s) override;
  void info(InfoRow row) override;
  void drops(const std::string& cause, uint64_t n) override;
  bool paused() const noexcept override;
  void flush() override;
  void closed_at_exit(const Record& r) override;

 private:
  Collector& c_;
};

}  // namespace rocprof::session
