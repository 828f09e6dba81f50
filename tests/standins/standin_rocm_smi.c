/* TEST-ONLY STAND-IN for librocm_smi64 (ROCm SMI): no AMD GPU exists on the machines the
 * tests run on. Exports the ROCm SMI entry points rocprof's metrics backend calls, built on
 * the real rocm_smi.h (Debian's librocm-smi-dev), and answers with values that are functions
 * of the device d and of k, the number of rsmi_dev_busy_percent_get calls on d before this
 * reading (the backend reads busy percent first): see tests/standins/README.md. Devices:
 * ROCPROF_STANDIN_RSMI_DEVICES (default 2). Device 1 has no edge temperature sensor (as an
 * MI200/MI300), so the backend must fall back to the junction sensor. The energy counter is
 * a function of time instead (energy_standin.h). */
#include <rocm_smi/rocm_smi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "energy_standin.h"

#define MAX_DEVICES 8

static unsigned long long reads[MAX_DEVICES];
static int initialised;

static uint32_t count(void) {
  const char* v = getenv("ROCPROF_STANDIN_RSMI_DEVICES");
  uint32_t n = v ? (uint32_t)atoi(v) : 2;
  return n > MAX_DEVICES ? MAX_DEVICES : n;
}
static unsigned long long k_of(uint32_t d) { return reads[d] == 0 ? 0 : reads[d] - 1; }
#define CHECK(d)                                   \
  if (!initialised) return RSMI_STATUS_INIT_ERROR; \
  if ((d) >= count()) return RSMI_STATUS_INVALID_ARGS

rsmi_status_t rsmi_init(uint64_t flags) {
  (void)flags;
  energy_start_clock();
  initialised = 1;
  return RSMI_STATUS_SUCCESS;
}
rsmi_status_t rsmi_shut_down(void) {
  initialised = 0;
  return RSMI_STATUS_SUCCESS;
}
rsmi_status_t rsmi_status_string(rsmi_status_t status, const char** text) {
  *text = status == RSMI_STATUS_SUCCESS ? "RSMI_STATUS_SUCCESS" : "stand-in error";
  return RSMI_STATUS_SUCCESS;
}
rsmi_status_t rsmi_version_get(rsmi_version_t* v) {
  v->major = 5;
  v->minor = 2;
  v->patch = 3;
  v->build = "stand-in";
  return RSMI_STATUS_SUCCESS;
}
rsmi_status_t rsmi_num_monitor_devices(uint32_t* n) {
  if (!initialised) return RSMI_STATUS_INIT_ERROR;
  *n = count();
  return RSMI_STATUS_SUCCESS;
}
rsmi_status_t rsmi_dev_name_get(uint32_t d, char* name, size_t len) {
  CHECK(d);
  snprintf(name, len, "Stand-in AMD GPU %u", d);
  return RSMI_STATUS_SUCCESS;
}
rsmi_status_t rsmi_dev_unique_id_get(uint32_t d, uint64_t* id) {
  CHECK(d);
  *id = 0x5ca1ab1e00000000ull + d;
  return RSMI_STATUS_SUCCESS;
}
rsmi_status_t rsmi_dev_pci_id_get(uint32_t d, uint64_t* bdfid) {
  CHECK(d);
  *bdfid = (uint64_t)(0x10 + d) << 8; /* 0000:1d:00.0 */
  return RSMI_STATUS_SUCCESS;
}
rsmi_status_t rsmi_dev_busy_percent_get(uint32_t d, uint32_t* pct) {
  CHECK(d);
  unsigned long long k = reads[d]++;
  *pct = (uint32_t)((k * 11 + d * 20) % 101);
  return RSMI_STATUS_SUCCESS;
}
rsmi_status_t rsmi_dev_memory_busy_percent_get(uint32_t d, uint32_t* pct) {
  CHECK(d);
  *pct = (uint32_t)((k_of(d) * 5) % 101);
  return RSMI_STATUS_SUCCESS;
}
rsmi_status_t rsmi_dev_memory_usage_get(uint32_t d, rsmi_memory_type_t type, uint64_t* used) {
  CHECK(d);
  if (type != RSMI_MEM_TYPE_VRAM) return RSMI_STATUS_NOT_SUPPORTED;
  *used = (2000 + 10 * k_of(d) + d) * 1000000ull;
  return RSMI_STATUS_SUCCESS;
}
rsmi_status_t rsmi_dev_power_ave_get(uint32_t d, uint32_t sensor, uint64_t* microwatts) {
  CHECK(d);
  if (sensor != 0) return RSMI_STATUS_INVALID_ARGS;
  *microwatts = (200 + k_of(d)) * 1000000ull + d * 250000ull;
  return RSMI_STATUS_SUCCESS;
}
/* A 32-bit counter of ENERGY_COUNT_UJ µJ steps, as older AMD firmware keeps it, from
 * ROCPROF_STANDIN_ENERGY_START counts (default 0; near 2^32 it wraps soon). */
rsmi_status_t rsmi_dev_energy_count_get(uint32_t d, uint64_t* counts, float* resolution,
                                        uint64_t* timestamp) {
  CHECK(d);
  if (!energy_has_counter(d)) return RSMI_STATUS_NOT_SUPPORTED;
  if (counts == NULL) return RSMI_STATUS_INVALID_ARGS;
  const char* v = getenv("ROCPROF_STANDIN_ENERGY_START");
  unsigned long long start = v ? strtoull(v, NULL, 10) : 0;
  *counts = (start + (unsigned long long)(energy_microjoules(d) / ENERGY_COUNT_UJ)) & 0xffffffffull;
  if (resolution) *resolution = (float)ENERGY_COUNT_UJ;
  if (timestamp) *timestamp = energy_update_ns();
  return RSMI_STATUS_SUCCESS;
}
rsmi_status_t rsmi_dev_temp_metric_get(uint32_t d, uint32_t sensor, rsmi_temperature_metric_t m,
                                       int64_t* millicelsius) {
  CHECK(d);
  if (m != RSMI_TEMP_CURRENT) return RSMI_STATUS_NOT_SUPPORTED;
  if (sensor == RSMI_TEMP_TYPE_EDGE && d != 1) {
    *millicelsius = (int64_t)(45 + k_of(d)) * 1000;
    return RSMI_STATUS_SUCCESS;
  }
  if (sensor == RSMI_TEMP_TYPE_JUNCTION) {
    *millicelsius = (int64_t)(50 + k_of(d)) * 1000 + 500;
    return RSMI_STATUS_SUCCESS;
  }
  return RSMI_STATUS_NOT_SUPPORTED;
}
rsmi_status_t rsmi_dev_gpu_clk_freq_get(uint32_t d, rsmi_clk_type_t type, rsmi_frequencies_t* f) {
  CHECK(d);
  memset(f, 0, sizeof *f);
  if (type == RSMI_CLK_TYPE_SYS) {
    f->num_supported = 3;
    f->current = (uint32_t)(k_of(d) % 3);
    f->frequency[0] = 500000000ull;
    f->frequency[1] = 1000000000ull;
    f->frequency[2] = 1500000000ull;
  } else if (type == RSMI_CLK_TYPE_MEM) {
    f->num_supported = 1;
    f->current = 0;
    f->frequency[0] = 1200000000ull;
  } else {
    return RSMI_STATUS_NOT_SUPPORTED;
  }
  return RSMI_STATUS_SUCCESS;
}
rsmi_status_t rsmi_dev_gpu_metrics_info_get(uint32_t d, rsmi_gpu_metrics_t* m) {
  CHECK(d);
  memset(m, 0, sizeof *m);
  m->common_header.structure_size = sizeof *m;
  m->common_header.format_revision = 1;
  m->common_header.content_revision = 3;
  m->throttle_status = (uint32_t)(k_of(d) % 4);
  return RSMI_STATUS_SUCCESS;
}
