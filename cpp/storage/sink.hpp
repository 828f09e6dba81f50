// Where drained records go. The drain thread is the only caller, so implementations need no
// locking. NullSink discards (overhead baselines), MemorySink keeps everything (tests).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "rocprof/info.hpp"
#include "rocprof/record.hpp"

namespace rocprof {

struct SessionInfo {
  std::string path;                 // database file
  std::string guid;                 // UUIDv7 text
  std::string options_json = "{}";  // also the process row's extdata (ROCm: the tool config)
  bool kernel_rename = false;  // dispatches named by their ROCTx range (rocprofv3 --kernel-rename)
  bool guid_per_row = false;   // --guid-per-row: the guid column stored in every row (tables.sql)
  uint32_t pid = 0, ppid = 0;
  uint64_t init_ns = 0;  // session start (BOOTTIME)
  uint64_t process_start_ns = 0;
  std::string command;                  // secrets already cut (storage/redact.hpp)
  std::string environment_json = "{}";  // secrets already cut
  std::size_t redacted_command = 0, redacted_environment = 0;  // how many values were cut
  // Recorded text (ROCTx messages, names) has URL credentials and tokens cut as it is
  // written; false: kept as recorded (--no-redact).
  bool redact_text = true;
  std::string hostname, system_name, release, version, machine, domain_name, machine_id;
  std::string cpu_model;
  uint32_t cpu_cores = 0;  // online logical CPUs (the CPU agent's cpu_cores_count)
  std::vector<std::pair<std::string, std::string>> metadata;  // extra project rows
  // --max-size (bytes; 0: unbounded) and --keep: a bounded run (storage/step_keeper.hpp).
  uint64_t max_size = 0;
  std::string keep = "auto";
  bool gpu_records = false;  // GPU kernels or copies are traced: steps wait for their records
};

class Sink {
 public:
  virtual ~Sink() = default;
  // Returns false with *error set when the output cannot be created.
  virtual bool open(const SessionInfo& info, std::string* error) = 0;
  // Strings first_id, first_id+1, ... in order; always before records that use them.
  virtual void write_strings(uint32_t first_id, const std::vector<std::string>& strings) = 0;
  virtual void write_info(const InfoRow& row) = 0;
  virtual void write_records(const Record* records, std::size_t n) = 0;
  // Makes everything written so far durable (a SIGKILL after this loses none of it).
  virtual void commit() = 0;
  virtual void close(uint64_t end_ns) = 0;
  // After close(): whether the output is a complete database, closed (the run's exit report
  // takes the writer's word for it instead of reading the file back).
  virtual bool closed_complete() const { return false; }
  // Records handed to the sink that it could not store (the output failed: disk full, I/O
  // error, read-only). May be read from any thread.
  virtual uint64_t unstored() const { return 0; }
};

class NullSink final : public Sink {
 public:
  bool open(const SessionInfo&, std::string*) override { return true; }
  void write_strings(uint32_t, const std::vector<std::string>&) override {}
  void write_info(const InfoRow&) override {}
  void write_records(const Record*, std::size_t n) override { count += n; }
  void commit() override {}
  void close(uint64_t) override {}
  uint64_t count = 0;
};

class MemorySink final : public Sink {
 public:
  bool open(const SessionInfo& info, std::string*) override {
    session = info;
    opened = true;
    return true;
  }
  void write_strings(uint32_t first_id, const std::vector<std::string>& s) override {
    if (strings.size() < first_id - 1) strings.resize(first_id - 1);
    strings.resize(first_id - 1);
    strings.insert(strings.end(), s.begin(), s.end());
  }
  void write_info(const InfoRow& row) override { infos.push_back(row); }
  void write_records(const Record* r, std::size_t n) override {
    records.insert(records.end(), r, r + n);
  }
  void commit() override { ++commits; }
  void close(uint64_t end) override { closed_at = end; }

  SessionInfo session;
  bool opened = false;
  std::vector<std::string> strings;  // index = id - 1
  std::vector<InfoRow> infos;
  std::vector<Record> records;
  int commits = 0;
  uint64_t closed_at = 0;
};

}  // namespace rocprof
