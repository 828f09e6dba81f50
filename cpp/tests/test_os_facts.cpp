// OS facts the session gathers for the writer (session/os_facts.hpp), and the collector's use
// of them: new threads' rows carry the kernel's thread name, the output is prepared before the
// sink opens it. The sink itself does neither.
#include <gtest/gtest.h>

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "buffer/collector.hpp"
#include "session/os_facts.hpp"

using namespace rocprof;

namespace {
uint32_t os_tid() { return static_cast<uint32_t>(syscall(SYS_gettid)); }
}  // namespace

TEST(OsFacts, ThreadNameIsTheKernelsName) {
  std::string got;
  std::thread t([&] {
    pthread_setname_np(pthread_self(), "golden-worker");
    got = session::thread_name(os_tid());
  });
  t.join();
  EXPECT_EQ(got, "golden-worker");
  EXPECT_EQ(session::thread_name(0x7ffffff0u), "") << "no such thread: no name";
}

TEST(OsFacts, CollectorNamesNewThreadsAndPreparesTheOutputFirst) {
  StringTable strings;
  auto sink = std::make_unique<MemorySink>();
  MemorySink* mem = sink.get();
  std::vector<std::string> prepared;
  bool opened_before_prepare = false;
  CollectorOptions opts;
  opts.thread_name = [](uint32_t tid) { return "t" + std::to_string(tid); };
  opts.prepare_output = [&](std::string* path, std::string*) {
    opened_before_prepare = mem->opened;
    prepared.push_back(*path);
    *path += ".renamed";  // the name settled by the claim is the one opened
    return true;
  };
  SessionInfo info;
  info.path = "/nowhere/x_results.db";
  Collector c(std::move(sink), info, strings, opts);
  std::string error;
  ASSERT_TRUE(c.start(&error)) << error;
  c.add_info(ThreadInfo{12345, 1, 0, {}});       // a producer's row for another thread
  c.add_info(ThreadInfo{12346, 1, 0, "named"});  // already named: kept
  std::thread w([&] {
    Record r{};
    r.kind = RecordKind::kRegion;
    r.tid = os_tid();
    c.emit(r);
  });
  w.join();
  c.flush();
  c.stop();
  ASSERT_EQ(prepared.size(), 1u);
  EXPECT_EQ(prepared[0], info.path);
  EXPECT_EQ(mem->session.path, info.path + ".renamed");
  EXPECT_FALSE(opened_before_prepare);
  std::map<uint32_t, std::vector<std::string>> names;  // tid → names of its rows
  for (const InfoRow& row : mem->infos)
    if (auto* t = std::get_if<ThreadInfo>(&row))
      names[t->tid].push_back(t->end ? "end:" + t->name : t->name);
  EXPECT_EQ(names[12345], std::vector<std::string>{"t12345"});
  EXPECT_EQ(names[12346], std::vector<std::string>{"named"});
  ASSERT_EQ(mem->records.size(), 1u);
  const uint32_t tid = mem->records[0].tid;
  ASSERT_EQ(names[tid].size(), 2u);
  EXPECT_EQ(names[tid][0], "t" + std::to_string(tid));
  EXPECT_EQ(names[tid][1], "end:") << "an ended thread's row keeps the name already stored";
}
