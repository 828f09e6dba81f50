#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include <set>
#include <thread>
#include <vector>

#include "buffer/string_table.hpp"
#include "rocprof/exit_safe_tls.hpp"

using rocprof::StringTable;

TEST(StringTable, SameStringSameIdFromOne) {
  StringTable t;
  EXPECT_EQ(t.intern("a"), 1u);
  EXPECT_EQ(t.intern("b"), 2u);
  EXPECT_EQ(t.intern("a"), 1u);
  EXPECT_EQ(t.intern_cached("b"), 2u);
  EXPECT_EQ(t.get(2), "b");
  EXPECT_EQ(t.get(0), "");
}

TEST(StringTable, CachedLookupDoesNotKeepCallerBuffer) {
  StringTable t;
  char buf[8] = "first";
  const uint32_t id = t.intern_cached(buf);
  std::snprintf(buf, sizeof buf, "other");  // the caller reuses its buffer
  EXPECT_NE(t.intern_cached(buf), id);
  EXPECT_EQ(t.intern_cached("first"), id);
  EXPECT_EQ(t.get(id), "first");
}

TEST(StringTable, TakeNewHandsOutEachStringOnce) {
  StringTable t;
  t.intern("x");
  t.intern("y");
  std::vector<std::string> out;
  EXPECT_EQ(t.take_new(out), 1u);
  EXPECT_EQ(out, (std::vector<std::string>{"x", "y"}));
  out.clear();
  t.intern("z");
  EXPECT_EQ(t.take_new(out), 3u);
  EXPECT_EQ(out, (std::vector<std::string>{"z"}));
  t.rewind_taken();
  out.clear();
  EXPECT_EQ(t.take_new(out), 1u);
  EXPECT_EQ(out.size(), 3u);
}

TEST(StringTable, ConcurrentInterningAgreesOnIds) {
  StringTable t;
  constexpr int kThreads = 4, kNames = 500;
  std::vector<std::vector<uint32_t>> ids(kThreads, std::vector<uint32_t>(kNames));
  std::vector<std::thread> threads;
  for (int w = 0; w < kThreads; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < kNames; ++i) ids[w][i] = t.intern_cached("name-" + std::to_string(i));
    });
  }
  for (auto& th : threads) th.join();
  for (int w = 1; w < kThreads; ++w) EXPECT_EQ(ids[w], ids[0]);
  EXPECT_EQ(t.size(), static_cast<size_t>(kNames));
  std::set<uint32_t> unique(ids[0].begin(), ids[0].end());
  EXPECT_EQ(unique.size(), static_cast<size_t>(kNames));
}

TEST(StringTable, ThreadCacheStaysBoundedWithEveryStringNew) {
  // A program that names every call differently (a message with a step number) must not grow
  // each thread's cache with the table; ids stay those of the table.
  StringTable t;
  constexpr int kNames = 100000;
  std::vector<uint32_t> ids(kNames);
  for (int i = 0; i < kNames; ++i) ids[i] = t.intern_cached("step " + std::to_string(i));
  EXPECT_LE(StringTable::local_cache_size(), 65536u);
  EXPECT_EQ(t.size(), static_cast<size_t>(kNames));
  for (int i = 0; i < kNames; i += 997)
    EXPECT_EQ(t.intern_cached("step " + std::to_string(i)), ids[i]);
  EXPECT_EQ(t.get(ids[12345]), "step 12345");
}

// exit() runs the calling thread's thread_local destructors before its atexit handlers, and a
// native program's session is stopped from such a handler: interning there must still work.
namespace {
StringTable* g_exit_table = nullptr;
int g_exit_fd = -1;
void intern_at_exit() {
  uint32_t sum = 0;
  for (int i = 0; i < 5000; ++i) sum += g_exit_table->intern_cached("at exit " + std::to_string(i));
  for (int i = 0; i < 5000; ++i) sum -= g_exit_table->intern_cached("at exit " + std::to_string(i));
  const char ok = sum == 0 && g_exit_table->intern_cached("before exit 7") == 8 ? 'y' : 'n';
  if (write(g_exit_fd, &ok, 1) != 1) _exit(3);
}
}  // namespace

TEST(StringTable, CachedInternWorksInExitHandlers) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    static StringTable t;  // outlives the handler (never destroyed before it runs)
    g_exit_table = &t;
    g_exit_fd = fds[1];
    for (int i = 0; i < 100; ++i) t.intern_cached("before exit " + std::to_string(i));
    std::atexit(intern_at_exit);
    std::exit(0);
  }
  close(fds[1]);
  char got = 0;
  const ssize_t n = read(fds[0], &got, 1);
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the child died: " << (WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exit status");
  EXPECT_EQ(n, 1);
  EXPECT_EQ(got, 'y');
}

namespace {
int g_freed = 0;
struct Counted {
  ~Counted() { ++g_freed; }
};
thread_local Counted* t_counted = nullptr;
}  // namespace

TEST(ExitSafeTls, FreedWhenItsThreadEnds) {
  g_freed = 0;
  Counted* seen = nullptr;
  std::thread([&seen] {
    seen = &rocprof::exit_safe_tls::get(t_counted);
    EXPECT_EQ(&rocprof::exit_safe_tls::get(t_counted), seen);  // one per thread
  }).join();
  EXPECT_NE(seen, nullptr);
  EXPECT_EQ(g_freed, 1);
  EXPECT_EQ(t_counted, nullptr);  // this thread never made one
}
