#include "other_process.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "os_facts.hpp"
#include "rocprof/clock.hpp"
#include "rocprof/version.hpp"
#include "storage/rocpd_sink.hpp"
#include "system_info.hpp"

namespace rocprof::session {

OtherProcessRecording::~OtherProcessRecording() { stop(); }

bool OtherProcessRecording::start(uint32_t pid, const std::string& output_template,
                                  const std::string& options_json,
                                  std::vector<std::pair<std::string, std::string>> metadata,
                                  std::string* error) {
  SessionInfo info;
  fill_system_info(info, pid);
  info.init_ns = now_ns();
  info.guid = make_uuid_v7();
  info.options_json = options_json;
  info.metadata = std::move(metadata);
  info.metadata.emplace_back("rocprof.version", kVersion);
  // %tag%, %argt% ... name the process's own command line.
  std::vector<std::string> argv;
  {
    std::ifstream f("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
    for (std::string word; std::getline(f, word, '\0');) argv.push_back(word);
  }
  if (argv.empty()) argv.emplace_back("python");
  if (!output::expand(output_template, argv, &info.path, error, pid, info.ppid)) return false;
  CollectorOptions opts;
  opts.thread_name = [pid](uint32_t tid) { return thread_name(pid, tid); };
  opts.announce_producers = false;
  opts.prepare_output = [this](std::string* path, std::string* why) {
    output::Claim c;
    if (!output::claim(*path, false, &c, why)) return false;
    if (!c.note.empty()) std::fprintf(stderr, "rocprof: %s\n", c.note.c_str());
    claim_ = c;
    *path = c.path;
    return true;
  };
  opts.abandon_output = [this](const std::string& path) {
    for (const char* ext : {"", "-wal", "-shm", "-journal"}) ::remove((path + ext).c_str());
    output::release(&claim_);
  };
  collector_ = std::make_unique<Collector>(std::make_unique<RocpdSink>(), info, strings_, opts);
  if (!collector_->start(error)) {
    collector_.reset();
    return false;
  }
  path_ = claim_.path;
  return true;
}

std::string OtherProcessRecording::stop() {
  if (collector_ == nullptr) return path_;
  collector_->stop();
  collector_.reset();
  output::release(&claim_);
  return path_;
}

}  // namespace rocprof::session

namespace rocprof::capture {

std::unique_ptr<OtherProcessContext> record_other_process(
    uint32_t pid, const std::string& output_template, const std::string& options_json,
    std::vector<std::pair<std::string, std::string>> metadata, std::string* error) {
  auto rec = std::make_unique<session::OtherProcessRecording>();
  if (!rec->start(pid, output_template, options_json, std::move(metadata), error)) return nullptr;
  return rec;
}

}  // namespace rocprof::capture
