// The rocpd SQLite sink: one database per process in ROCm's schema v3. It only routes: each
// record or info row goes through the mapping (rocpd_mapping.hpp: what goes into which
// column) to the writer (rocpd_writer.hpp: the schema embedded from rocpd/schema/*.sql,
// prepared statements, bounded transactions, storage failures). WAL journal + a commit every
// few hundred ms: a killed process leaves a database that opens and holds everything but the
// last moment. The path must name no existing database (session/os_facts.hpp prepares it).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "rocpd_mapping.hpp"
#include "rocpd_writer.hpp"
#include "sink.hpp"
#include "step_keeper.hpp"

namespace rocprof {

class RocpdSink final : public Sink {
 public:
  RocpdSink() = default;
  ~RocpdSink() override;

  bool open(const SessionInfo& info, std::string* error) override;
  void write_strings(uint32_t first_id, const std::vector<std::string>& strings) override;
  void write_info(const InfoRow& row) override;
  void write_records(const Record* records, std::size_t n) override;
  void commit() override;
  void close(uint64_t end_ns) override;
  bool closed_complete() const override { return writer_.closed_complete(); }

  uint64_t unstored() const override { return writer_.unstored(); }
  // Why the output stopped ("" while it works): "disk full", "I/O error", "read-only".
  const std::string& storage_failure() const { return writer_.failure(); }

  const std::string& suffix() const;

 private:
  void write_record(const Record& r);
  void write_callsite(CallsiteInfo c);
  // rocprof.redacted: how many values were cut where (counts, never values).
  void write_redaction_counts();

  std::unique_ptr<rocpd::Mapping> map_;  // null after close
  std::string suffix_;                   // the closed mapping's
  bool redact_text_ = true;
  std::size_t redacted_command_ = 0, redacted_environment_ = 0, redacted_options_ = 0;
  std::size_t redacted_text_ = 0;
  // Written strings holding the redaction mark: two texts cut to the same one must still be
  // two rocpd_string rows (the column is UNIQUE), so a repeat gets its id appended.
  std::unordered_set<std::string> marked_;
  std::unordered_set<uint32_t> threads_;  // tids with a rocpd_info_thread row
  rocpd::Writer writer_;
  std::unique_ptr<StepKeeper> keeper_;  // a bounded run's (--max-size); null otherwise
  uint64_t last_record_ns_ = 0;  // the newest record time handed in (metadata at each commit)
};

}  // namespace rocprof
