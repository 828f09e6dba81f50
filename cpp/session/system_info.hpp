// Facts about the machine and process for rocpd_info_node / rocpd_info_process.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "storage/sink.hpp"

namespace rocprof {

// Fills node/process fields of `info` (pid, ppid, command, environment, host, CPU).
void fill_system_info(SessionInfo& info);
// The same for another process of this machine (`rocprof attach --method read-only` records
// one from outside): its /proc files, its starting environment.
void fill_system_info(SessionInfo& info, uint32_t pid);
// JSON object of the environment, secrets cut out (storage/redact.hpp); *cuts counts them.
std::string redacted_environment_json(std::size_t* cuts);
// A version-7 (time-ordered) UUID.
std::string make_uuid_v7();

}  // namespace rocprof
