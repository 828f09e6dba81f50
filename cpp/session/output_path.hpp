// The one owner of output paths: what `-d DIR -o NAME` mean, for every process of a run (the
// launcher, Python children, native programs that autostart from ROCPROF_AUTOSTART_OUTPUT,
// fork children) and for the outputs written beside a database at exit.
//
//   template   <dir>/<name>_results.db with placeholders (rocprofv3's: %hostname%, %pid%,
//              %rank%, %env{VAR}% ...), expanded in the process that writes, so a fork
//              child's %pid% is its own
//   claim      the expanded name taken atomically for the whole run: created with O_EXCL and
//              flock()ed until the database is closed, so two runs (or two ranks resolving to
//              one name) never write into one file; a clash gets another name and a line
//              saying so, or with `strict` (--no-clobber) an error
//
// In C++ because native processes without Python resolve and claim their paths too; Python
// reaches it through rocprof._core.
#pragma once
#include <string>
#include <vector>

namespace rocprof::session::output {

inline constexpr const char* kDatabaseSuffix = "_results.db";
inline constexpr const char* kDefaultDir = "rocprof-output/%hostname%";
inline constexpr const char* kDefaultName = "%pid%";
// The run's %launch_time%, which the launcher exports to every process of the run.
inline constexpr const char* kLaunchTimeVar = "ROCPROF_LAUNCH_TIME";

// Variables naming a process's global rank (torchrun, Open MPI, MPICH/Intel MPI, Slurm,
// PMIx), in the order they are read; LOCAL_RANK is not one (it repeats on every node).
const std::vector<std::string>& rank_variables();
// The first rank variable holding a number, else "0"; ranked(): whether any holds one.
std::string rank();
bool ranked();

// <dir>/<name>_results.db, the defaults for empty parts (an absolute name: <name>_results.db);
// placeholders left in.
std::string database_template(const std::string& dir, const std::string& name);

// A name template that differs in every process: `name` (the default for "") if it names the
// pid already (%pid%, %p), else with "_%pid%" added (a recording process's children).
std::string per_process_name(const std::string& name);

// Expands every placeholder of `tmpl` for this process. `argv` is the profiled program's
// command line (%tag%, %argt% ...); empty: this process's own (/proc/self/cmdline). False with
// a one-line *error naming the placeholder or variable: unknown placeholders, unset
// %env{VAR}% variables, and values holding '/' or '..' (they could leave -d) are refused.
// `pid` (not 0): the path is that process's (%pid%, %ppid% are its own), written from here.
bool expand(const std::string& tmpl, const std::vector<std::string>& argv, std::string* out,
            std::string* error, long pid = 0, long ppid = 0);

// `path` made absolute against the current folder and normalised as text: a/./b/../c is a/c,
// as os.path.normpath (no links resolved).
std::string absolute(const std::string& path);

// A database path's output prefix (the path less _results.db) and the same path with
// "_<pid>" before the suffix (a fork child's own name).
std::string prefix_of(const std::string& db_path);
std::string with_pid_tag(const std::string& db_path, long pid);

// Whether `path` could be created, without creating anything: name lengths, folders that are
// files or dangling links, folders that cannot be written; with `strict`, an existing file.
bool check_creatable(const std::string& path, bool strict, std::string* error);

// Creates the missing folders of `dir`; false with *error naming the folder and the cause.
bool make_folders(const std::string& dir, std::string* error);

struct Claim {
  std::string path;  // the name taken (may differ from the one asked for)
  std::string note;  // "" or why another name was taken
  int fd = -1;       // open, flock()ed: held until release()
};

// Takes `wanted` for this process (folders created first). A file of an earlier, finished run
// is replaced (as rocprofv3 does), unless `strict`. A file in use by a live process, or
// written earlier in this run (ROCPROF_MANIFEST lists it), is never touched: another name is
// taken (NAME_<pid>_results.db, then NAME_<pid>_2 ...) and `note` says so; with `strict` that
// is an error instead. The name taken is listed in the run manifest.
// Paths are made absolute first: what is printed and listed names the file wherever it is read.
bool claim(const std::string& wanted, bool strict, Claim* out, std::string* error);
// After the database is closed: the lock goes with the descriptor.
void release(Claim* c);
// In a fork child: drops the inherited descriptor without unlocking the parent's claim.
void forget_after_fork(Claim* c);

}  // namespace rocprof::session::output
