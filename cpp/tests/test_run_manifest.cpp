// The run manifest (session/run_manifest.hpp): the exit report takes a writer's word that it
// closed its database complete while the file is the one it left, and reads any other back.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "session/output_path.hpp"
#include "session/run_manifest.hpp"

namespace manifest = rocprof::session::manifest;
namespace output = rocprof::session::output;

namespace {
void write(const std::string& path, const char* text, const char* mode = "w") {
  std::FILE* f = std::fopen(path.c_str(), mode);
  ASSERT_NE(f, nullptr) << path;
  std::fputs(text, f);
  std::fclose(f);
}

struct ThisRun {  // a manifest of this test's own, named where Lock finds it
  // Named as the core names paths (TempDir() ends with a '/').
  std::string dir =
      output::absolute(std::string(::testing::TempDir()) + "/manifest_" + std::to_string(getpid()));
  std::string path = dir + "/run.manifest";
  ThisRun() {
    std::filesystem::create_directories(dir);
    write(path, "");  // as the launcher makes it
    ::setenv("ROCPROF_MANIFEST", path.c_str(), 1);
  }
  ~ThisRun() {
    ::unsetenv("ROCPROF_MANIFEST");
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};
}  // namespace

TEST(RunManifest, AClosedCompleteDatabaseIsTakenAtItsWritersWordWhileUntouched) {
  ThisRun run;
  // Not a database at all: read back, it could only be "not a usable database".
  const std::string said = run.dir + "/said_results.db";
  const std::string unsaid = run.dir + "/unsaid_results.db";
  write(said, "no SQLite here");
  write(unsaid, "no SQLite here");
  {
    manifest::Lock lock;
    lock.add(said);
    lock.add(unsaid);
    lock.closed_complete(said);
  }
  EXPECT_EQ(manifest::databases(run.path), (std::vector<std::string>{said, unsaid}));
  auto out = manifest::outcomes(run.path);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].readable);
  EXPECT_EQ(out[0].line, "rocprof: results written to " + said);
  EXPECT_FALSE(out[1].readable);
  EXPECT_NE(out[1].line.find("is not a usable database"), std::string::npos) << out[1].line;

  write(said, "!", "a");  // changed after its writer let it go: read back
  out = manifest::outcomes(run.path);
  EXPECT_FALSE(out[0].readable);
  EXPECT_NE(out[0].line.find("is not a usable database"), std::string::npos) << out[0].line;

  // Replaced by another file under the same name (another inode): read back too.
  {
    manifest::Lock lock;
    lock.closed_complete(said);  // the word for the changed file
  }
  EXPECT_TRUE(manifest::outcomes(run.path)[0].readable);
  const std::string other = run.dir + "/other";
  write(other, "no SQLite here!");
  std::filesystem::rename(other, said);
  EXPECT_FALSE(manifest::outcomes(run.path)[0].readable);
}
