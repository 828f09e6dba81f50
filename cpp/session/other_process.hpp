// A database about another process, written from this one: `rocprof attach PID --method
// read-only` samples a process it runs no code in, and what it records must read like that
// process's own database (its pid, command line, start time, thread names), through the same
// collector, mapping and writer as a session (buffer/, storage/). A capture source sees it as
// its context (capture/context.hpp: capture::record_other_process).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "buffer/collector.hpp"
#include "buffer/string_table.hpp"
#include "capture/context.hpp"
#include "session/output_path.hpp"

namespace rocprof::session {

class OtherProcessRecording final : public OtherProcessContext {
 public:
  OtherProcessRecording() = default;
  ~OtherProcessRecording();
  OtherProcessRecording(const OtherProcessRecording&) = delete;
  OtherProcessRecording& operator=(const OtherProcessRecording&) = delete;

  // Creates the database of process `pid` at `output_template` (output_path.hpp; %pid% and the
  // command-line placeholders are the process's) and starts the collector's drain thread.
  // False with a one-line *error.
  bool start(uint32_t pid, const std::string& output_template, const std::string& options_json,
             std::vector<std::pair<std::string, std::string>> metadata, std::string* error);
  // Started: records go in with collector().emit() from any thread, strings through strings().
  Collector& collector() { return *collector_; }
  StringTable& strings() { return strings_; }
  // Drains, closes the database and frees its name; returns its path ("" if never started).
  std::string stop();

  // The context over the started collector: records from any thread, its own strings.
  bool emit(const Record& r) noexcept override { return collector_->emit(r); }
  void emit_waiting(const Record& r) override { collector_->emit(r); }
  uint32_t intern(std::string_view s) override { return strings_.intern(s); }
  void info(InfoRow row) override { collector_->add_info(std::move(row)); }
  void drops(const std::string& cause, uint64_t n) override { collector_->add_drops(cause, n); }
  bool paused() const noexcept override { return false; }
  void flush() override { collector_->flush(); }
  void closed_at_exit(const Record& r) override { collector_->add_closed_at_exit(r); }
  std::string finish() override { return stop(); }

 private:
  StringTable strings_;
  std::unique_ptr<Collector> collector_;
  output::Claim claim_;
  std::string path_;
};

}  // namespace rocprof::session
