// A database about another process, written from this one: `rocprof attach PID --method
// read-only` samples a process it runs no code in, and what it records must read like that
// process's own database (its pid, command line, start time, thread names), through the same
// collector, mapping and writer as a session (buffer/, storage/).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "buffer/collector.hpp"
#include "buffer/string_table.hpp"
#include "session/output_path.hpp"

namespace rocprof::session {

class OtherProcessRecording {
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

 private:
  StringTable strings_;
  std::unique_ptr<Collector> collector_;
  output::Claim claim_;
  std::string path_;
};

}  // namespace rocprof::session
