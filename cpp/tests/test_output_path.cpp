// Output paths (session/output_path.hpp): placeholders, the %env{}% rules, and claims that
// never let two writers share a file.
#include <gtest/gtest.h>

#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "session/output_path.hpp"

namespace out = rocprof::session::output;

namespace {
bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}
void touch(const std::string& p) {
  std::FILE* f = std::fopen(p.c_str(), "w");
  ASSERT_NE(f, nullptr) << p;
  std::fputs("old", f);
  std::fclose(f);
}
// The folders the tests made, removed when the test program ends (TempDir is the shared /tmp).
struct MadeFolders {
  std::vector<std::string> paths;
  ~MadeFolders() {
    std::error_code ec;
    for (const std::string& p : paths) std::filesystem::remove_all(p, ec);
  }
} g_made;
std::string temp_dir(const char* name) {
  // Named as the core names paths (TempDir() ends with a '/').
  const std::string d = out::absolute(std::string(::testing::TempDir()) + "/" + name + "_" +
                                      std::to_string(getpid()));
  g_made.paths.push_back(d);
  std::string error;
  EXPECT_TRUE(out::make_folders(d, &error)) << error;
  return d;
}
std::string expanded(const std::string& t,
                     std::vector<std::string> argv = {"/bin/app", "a b", "c"}) {
  std::string r, error;
  EXPECT_TRUE(out::expand(t, argv, &r, &error)) << error;
  return r;
}
std::string expand_error(const std::string& t) {
  std::string r, error;
  EXPECT_FALSE(out::expand(t, {"app"}, &r, &error)) << t << " -> " << r;
  return error;
}
}  // namespace

TEST(OutputPath, Placeholders) {
  const std::string pid = std::to_string(getpid());
  EXPECT_EQ(expanded("d/%pid%_x"), "d/" + pid + "_x");
  EXPECT_EQ(expanded("%p-%tag%-%argt%-%args%"), pid + "-app-app_a_b_c-a_b_c");
  EXPECT_EQ(expanded("100%"), "100%") << "a lone % stays";
  EXPECT_EQ(expanded("o/x_%p_results.db"), "o/x_" + pid + "_results.db")
      << "the suffix is not text";
  EXPECT_EQ(out::database_template("", ""), "rocprof-output/%hostname%/%pid%_results.db");
  EXPECT_EQ(out::database_template("o/", "n"), "o/n_results.db");
  EXPECT_EQ(out::database_template("o", "/abs/n"), "/abs/n_results.db");
  EXPECT_EQ(out::database_template("", "/abs/%pid%"), "/abs/%pid%_results.db");
}

// A database written here about another process (`rocprof attach --method read-only`): its
// pid, ppid and command line name it, not this process's.
TEST(OutputPath, PlaceholdersOfAnotherProcess) {
  std::string r, error;
  ASSERT_TRUE(out::expand("d/%pid%_%ppid%_%tag%_%nid%-%p", {"/usr/bin/python3", "srv.py"}, &r,
                          &error, 4242, 17))
      << error;
  EXPECT_EQ(r, "d/4242_17_python3_4242-4242");
}

TEST(OutputPath, PerProcessNames) {
  EXPECT_EQ(out::per_process_name(""), "%pid%");
  EXPECT_EQ(out::per_process_name("run"), "run_%pid%");
  EXPECT_EQ(out::per_process_name("run_%p"), "run_%p");
  EXPECT_EQ(out::per_process_name("%pid%_x"), "%pid%_x");
  EXPECT_EQ(out::per_process_name("%ppid%"), "%ppid%_%pid%");
}

TEST(OutputPath, AbsolutePathsAreNormalisedAsText) {
  EXPECT_EQ(out::absolute("/a/./b//c/../d/"), "/a/b/d");
  EXPECT_EQ(out::absolute("/../a/.."), "/");
  const std::filesystem::path cwd = std::filesystem::current_path();
  EXPECT_EQ(out::absolute("./rocprof-output/host/../x_results.db"),
            (cwd / "rocprof-output" / "x_results.db").string());
  EXPECT_EQ(out::absolute("../x_results.db"), (cwd.parent_path() / "x_results.db").string());
  EXPECT_EQ(out::absolute(""), cwd.string());
}

TEST(OutputPath, RankVariablesInOrder) {
  ::unsetenv("RANK");
  ::setenv("SLURM_PROCID", "7", 1);
  ::setenv("OMPI_COMM_WORLD_RANK", "x", 1);  // not a number: skipped
  EXPECT_EQ(out::rank(), "7");
  EXPECT_TRUE(out::ranked());
  EXPECT_EQ(expanded("r%rank%-%r-%nid%"), "r7-7-7");
  ::setenv("RANK", "3", 1);
  EXPECT_EQ(out::rank(), "3");
  for (const char* v : {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK"}) ::unsetenv(v);
  EXPECT_EQ(out::rank(), "0");
  EXPECT_FALSE(out::ranked());
}

TEST(OutputPath, EnvValuesMustBePlainNames) {
  ::setenv("ROCPROF_T_OK", "run1", 1);
  EXPECT_EQ(expanded("o/%env{ROCPROF_T_OK}%/$env{ROCPROF_T_OK}/%q{ROCPROF_T_OK}"),
            "o/run1/run1/run1");
  ::setenv("ROCPROF_T_UP", "../../x", 1);
  EXPECT_NE(expand_error("o/%env{ROCPROF_T_UP}%").find("ROCPROF_T_UP"), std::string::npos);
  ::setenv("ROCPROF_T_DOTS", "..", 1);
  EXPECT_NE(expand_error("o/%env{ROCPROF_T_DOTS}%").find("'..'"), std::string::npos);
  ::unsetenv("ROCPROF_T_UNSET");
  const std::string e = expand_error("o/%env{ROCPROF_T_UNSET}%");
  EXPECT_NE(e.find("unset environment variable ROCPROF_T_UNSET"), std::string::npos) << e;
  EXPECT_NE(expand_error("o/%nosuch%").find("unknown placeholder %nosuch%"), std::string::npos);
}

// As rocprofv3's format_path, which repeats until nothing changes: a variable's value may name
// placeholders and variables of its own; one that names itself is an error, not a hang.
TEST(OutputPath, EnvValuesMayNamePlaceholders) {
  ::setenv("ROCPROF_T_NEST", "%rank%-trace_%env{ROCPROF_T_OK2}%", 1);
  ::setenv("ROCPROF_T_OK2", "run2", 1);
  ::setenv("RANK", "5", 1);
  EXPECT_EQ(expanded("o/%env{ROCPROF_T_NEST}%"), "o/5-trace_run2");
  ::unsetenv("RANK");
  ::setenv("ROCPROF_T_SELF", "x%env{ROCPROF_T_SELF}%", 1);
  EXPECT_NE(expand_error("o/%env{ROCPROF_T_SELF}%").find("nested more than"), std::string::npos);
}

TEST(OutputPath, ClaimReplacesAFinishedRunsFileWithItsSidecars) {
  const std::string d = temp_dir("claim_replace");
  const std::string db = d + "/x_results.db";
  for (const char* ext : {"", "-wal", "-shm", "-journal"}) touch(db + ext);
  out::Claim c;
  std::string error;
  ASSERT_TRUE(out::claim(db, false, &c, &error)) << error;
  EXPECT_EQ(c.path, db);
  EXPECT_EQ(c.note, "");
  struct stat st{};
  ASSERT_EQ(::stat(db.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0) << "a new, empty file";
  for (const char* ext : {"-wal", "-shm", "-journal"}) EXPECT_FALSE(exists(db + ext)) << ext;
  out::release(&c);
}

TEST(OutputPath, ClaimNeverTakesAFileInUse) {
  const std::string d = temp_dir("claim_busy");
  const std::string db = d + "/same_results.db";
  touch(db);
  const int other = ::open(db.c_str(), O_RDONLY);  // another run's writer holds it
  ASSERT_EQ(::flock(other, LOCK_EX), 0);
  out::Claim c;
  std::string error;
  ASSERT_TRUE(out::claim(db, false, &c, &error)) << error;
  EXPECT_EQ(c.path, d + "/same_" + std::to_string(getpid()) + "_results.db");
  EXPECT_NE(c.note.find("being written by another process"), std::string::npos) << c.note;
  std::FILE* f = std::fopen(db.c_str(), "r");
  char buf[4] = {};
  ASSERT_EQ(std::fread(buf, 1, 3, f), 3u);
  std::fclose(f);
  EXPECT_STREQ(buf, "old") << "the other run's file is untouched";
  out::Claim strict;
  EXPECT_FALSE(out::claim(db, true, &strict, &error));
  EXPECT_NE(error.find("--no-clobber"), std::string::npos) << error;
  ::close(other);
  out::release(&c);
}

TEST(OutputPath, ErrorsNameThePathAndTheCause) {
  const std::string d = temp_dir("claim_errors");
  std::string error;
  const std::string long_name = d + "/" + std::string(300, 'n') + "_results.db";
  EXPECT_FALSE(out::check_creatable(long_name, false, &error));
  EXPECT_NE(error.find("311 bytes"), std::string::npos) << error;
  ASSERT_EQ(::symlink((d + "/gone").c_str(), (d + "/link").c_str()), 0);
  EXPECT_FALSE(out::make_folders(d + "/link/sub", &error));
  EXPECT_NE(error.find("symbolic link"), std::string::npos) << error;
  EXPECT_NE(error.find("does not exist"), std::string::npos) << error;
  touch(d + "/file");
  EXPECT_FALSE(out::check_creatable(d + "/file/x_results.db", false, &error));
  EXPECT_NE(error.find("it is a file"), std::string::npos) << error;
}
