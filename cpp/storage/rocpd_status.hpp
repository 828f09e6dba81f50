// Whether a database is complete, as its writer says (metadata rocprof.status) and a reader
// can check without writing. The writer sets "in-progress" when it creates the file, and
// "complete" (or "disk-full" / "write-error" when the output failed) when it closes it; a
// database still "in-progress" whose writer holds no lock on it was left by a killed process.
#pragma once
#include <string>

namespace rocprof::rocpd {

inline constexpr const char* kStatusTag = "rocprof.status";
inline constexpr const char* kLastRecordTag = "rocprof.last_record_ns";
inline constexpr const char* kStatusComplete = "complete";
inline constexpr const char* kStatusInProgress = "in-progress";
inline constexpr const char* kStatusDiskFull = "disk-full";
inline constexpr const char* kStatusWriteError = "write-error";

struct FileStatus {
  bool readable = false;
  std::string error;   // why not readable
  std::string status;  // "" for databases of other writers (no rocprof.status row)
};

// Opens `path` read-only (never creating or changing anything) and reads its status.
FileStatus read_status(const std::string& path);

}  // namespace rocprof::rocpd
