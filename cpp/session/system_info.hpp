// Facts about the machine and process for rocpd_info_node / rocpd_info_process.
#pragma once
#include <string>

#include "storage/sink.hpp"

namespace rocprof {

// Fills node/process fields of `info` (pid, ppid, command, environment, host, CPU).
void fill_system_info(SessionInfo& info);
// JSON object of the environment with secret-looking variables' values replaced.
std::string redacted_environment_json();
bool looks_secret(const std::string& name);
// `value` with credentials cut out: URL passwords, Bearer/Basic tokens, tokens of known
// formats; a value that is itself a long key becomes "<redacted>".
std::string redact_value(std::string value);
// A version-7 (time-ordered) UUID.
std::string make_uuid_v7();

}  // namespace rocprof
