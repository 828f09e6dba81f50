// The launch-site counters that both GPU backends store in their session's metadata
// (rocprof.cupti.launch_sites, rocprof.hsa.launch_sites), as "name=value,..." in this order:
//  captured       launches whose thread had Python frames
//  fast           of those, chains already resolved (no queueing)
//  queued         new chains handed to the resolver
//  queue_full     new chains dropped: the resolver's queue was full (their launches get no site)
//  table_full     chains not remembered: the key table was full (each launch queued anew)
//  faults         frame walks stopped by a fault guard
//  waits          records that waited for the resolver
//  wait_timeouts  records stored without their site: the resolver had not reached it in time
//  frames_gone    frames left out of a stack: their code was freed before the resolver came
//                 (a function or module that ended within milliseconds of its launch)
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

namespace rocprof {

constexpr int kLaunchSiteStats = 9;
// Namespace-scope constexpr: internal linkage (a function's static would be an exported object).
constexpr const char* kLaunchSiteStatNames[kLaunchSiteStats] = {
    "captured", "fast",  "queued",        "queue_full", "table_full",
    "faults",   "waits", "wait_timeouts", "frames_gone"};

inline std::string launch_site_stats_text(const uint64_t (&v)[kLaunchSiteStats]) {
  std::string s;
  for (int i = 0; i < kLaunchSiteStats; ++i)
    s += (i ? "," : "") + std::string(kLaunchSiteStatNames[i]) + "=" + std::to_string(v[i]);
  return s;
}

// The metadata entry `rocprof.<backend>.launch_sites`, and a line at exit when GPU records
// went without their Python line, or stacks without some of their frames.
inline std::string launch_site_stats_entry(const char* backend,
                                           const uint64_t (&v)[kLaunchSiteStats]) {
  const unsigned long long queue_full = v[3], late = v[7], gone = v[8];
  if (queue_full + late > 0)
    std::fprintf(stderr,
                 "rocprof: Python lines missing: %llu GPU records were written before the "
                 "resolver reached their stack, %llu new stacks found its queue full (metadata "
                 "rocprof.%s.launch_sites)\n",
                 late, queue_full, backend);
  if (gone > 0)
    std::fprintf(stderr,
                 "rocprof: %llu Python frames left out of launch stacks: their code was freed "
                 "before the resolver reached them (metadata rocprof.%s.launch_sites)\n",
                 gone, backend);
  return launch_site_stats_text(v);
}

}  // namespace rocprof
