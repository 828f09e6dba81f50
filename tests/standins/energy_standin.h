/* TEST-ONLY: the energy counter the NVML and ROCm SMI stand-ins share. Only where
 * ROCPROF_STANDIN_ENERGY_W is set (else no device has one, as a GPU before Volta): device d
 * draws W * (d + 1) watts, and its counter moves only every ROCPROF_STANDIN_ENERGY_MS
 * milliseconds (default 50), as a real one moves at its firmware's rate, counted from the
 * library's init; the first ROCPROF_STANDIN_ENERGY_DEVICES devices have it (default all).
 * tests/integration/test_energy_capture.py repeats these rules. */
#ifndef ROCPROF_ENERGY_STANDIN_H
#define ROCPROF_ENERGY_STANDIN_H

#include <stdlib.h>
#include <time.h>

#define ENERGY_COUNT_UJ 15.25 /* µJ per count of the AMD counter (exact in a float) */

static unsigned long long energy_t0_ns;

static unsigned long long energy_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}
static void energy_start_clock(void) { energy_t0_ns = energy_now_ns(); }

static double energy_env(const char* name, double fallback) {
  const char* v = getenv(name);
  return v && *v ? atof(v) : fallback;
}
static int energy_has_counter(unsigned int d) {
  if (getenv("ROCPROF_STANDIN_ENERGY_W") == NULL) return 0;
  return d < (unsigned int)energy_env("ROCPROF_STANDIN_ENERGY_DEVICES", 64);
}
/* Nanoseconds since init at the counter's last update. */
static unsigned long long energy_update_ns(void) {
  const unsigned long long period =
      (unsigned long long)(energy_env("ROCPROF_STANDIN_ENERGY_MS", 50) * 1e6);
  const unsigned long long t = energy_now_ns() - energy_t0_ns;
  return t / period * period;
}
/* Microjoules used by device d up to the counter's last update (W * ns / 1000 = µJ). */
static unsigned long long energy_microjoules(unsigned int d) {
  const double watts = energy_env("ROCPROF_STANDIN_ENERGY_W", 0) * (d + 1);
  return (unsigned long long)(watts * (double)energy_update_ns() / 1000.0);
}

#endif
