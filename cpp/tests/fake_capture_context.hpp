// A CaptureContext for tests: records, strings and info rows kept in memory, so a backend's
// mapping is checked field by field without a session, a sink or its hardware.
#pragma once
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "capture/context.hpp"

namespace rocprof::testing {

class FakeCaptureContext final : public CaptureContext {
 public:
  bool emit(const Record& r) noexcept override {
    std::lock_guard<std::mutex> g(mu_);
    records.push_back(r);
    return true;
  }
  void emit_waiting(const Record& r) override { emit(r); }
  uint32_t intern(std::string_view s) override {
    std::lock_guard<std::mutex> g(mu_);
    auto it = ids_.find(std::string(s));
    if (it != ids_.end()) return it->second;
    strings.emplace_back(s);
    const auto id = static_cast<uint32_t>(strings.size());  // 0 stays "none"
    ids_.emplace(std::string(s), id);
    return id;
  }
  void info(InfoRow row) override {
    std::lock_guard<std::mutex> g(mu_);
    infos.push_back(std::move(row));
  }
  void drops(const std::string& cause, uint64_t n) override {
    std::lock_guard<std::mutex> g(mu_);
    dropped[cause] += n;
  }
  bool paused() const noexcept override { return is_paused; }
  void flush() override {}
  void closed_at_exit(const Record& r) override {
    std::lock_guard<std::mutex> g(mu_);
    records.push_back(r);
    ++open_at_exit;
  }

  const std::string& text(uint32_t id) const { return strings.at(id - 1); }
  template <class T>
  std::vector<T> rows() const {
    std::vector<T> out;
    for (const InfoRow& r : infos)
      if (const T* t = std::get_if<T>(&r)) out.push_back(*t);
    return out;
  }

  std::vector<Record> records;
  std::vector<std::string> strings;
  std::vector<InfoRow> infos;
  std::map<std::string, uint64_t> dropped;
  std::atomic<bool> is_paused{false};  // set by a test while capture threads read it
  uint64_t open_at_exit = 0;

 private:
  std::mutex mu_;
  std::map<std::string, uint32_t> ids_;
};

}  // namespace rocprof::testing
