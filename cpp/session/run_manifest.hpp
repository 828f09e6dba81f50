// The run manifest: under `rocprof run` (in-process or `-- CMD`) every process of the run that
// records lists its database in one file (ROCPROF_MANIFEST), so that the launcher prints them
// all at exit and so that a name taken earlier in the run is never taken again (claims:
// output_path.hpp).
#pragma once
#include <string>
#include <vector>

namespace rocprof::session::manifest {

// This run's manifest file, "" outside `rocprof run`.
std::string path();

// The manifest held exclusively (flock) while one process of the run settles its name.
// Without a manifest it holds nothing and lists nothing.
class Lock {
 public:
  Lock();
  ~Lock();
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;
  bool listed(const std::string& db) const;
  void add(const std::string& db);
  // A name given back (its database could not be created): no longer the run's.
  void remove(const std::string& db);
  // Its writer closed the database complete: the exit report takes that word for it while
  // the file is as the writer left it (outcomes()).
  void closed_complete(const std::string& db);

 private:
  int fd_ = -1;
};

// The databases a manifest lists, each once, in order.
std::vector<std::string> databases(const std::string& manifest);

// Whether this process is the run's launcher (ROCPROF_LAUNCHER_PID), which reports the run's
// databases when it ends; an exec()ed image of it inherits the duty with its pid.
bool is_launcher();

// One line per database of the run, computed from what is on disk: "results written to PATH"
// only for a complete database; an incomplete, missing or unreadable one says so. `readable`:
// reports (-S, --stats, -f) can read it. A database its writer closed complete
// (Lock::closed_complete) is not read back while its file is the one the writer left (same
// inode, size, modification and change times) and readable: reading a database's status
// makes SQLite parse its whole schema, a few milliseconds per database at every run's end.
struct Outcome {
  std::string path;
  bool readable = false;
  std::string line;
};
std::vector<Outcome> outcomes(const std::string& manifest);

// For a launcher dying of a fatal signal (after its session was closed): the outcome lines
// on stderr, as its normal exit would have printed them, and the manifest removed (nothing
// reads it after the launcher; a process of the run that outlives it lists nothing then).
void finish_if_launcher();

}  // namespace rocprof::session::manifest
