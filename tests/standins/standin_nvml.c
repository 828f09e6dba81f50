/* TEST-ONLY STAND-IN for libnvidia-ml.so.1 (NVML): no NVIDIA GPU exists on the machines the
 * tests run on. Exports the NVML entry points rocprof's metrics backend calls, with NVML's
 * structures, and answers with values that are functions of the device d and of k, the
 * number of nvmlDeviceGetUtilizationRates calls on d before this reading (the backend reads
 * utilisation first): see tests/standins/README.md. Devices: ROCPROF_STANDIN_NVML_DEVICES
 * (default 2). The energy counter is a function of time instead (energy_standin.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "energy_standin.h"

#ifdef STANDIN_REAL_NVML_H
#include <nvml.h>
#else
#include "nvml_api.h"
#endif

#define MAX_DEVICES 8

static unsigned int count(void) {
  const char* v = getenv("ROCPROF_STANDIN_NVML_DEVICES");
  unsigned int n = v ? (unsigned int)atoi(v) : 2;
  return n > MAX_DEVICES ? MAX_DEVICES : n;
}

/* A device handle is the address of its slot; k is the reading number. */
static struct slot {
  unsigned int d;
  unsigned long long k, fields;
} slots[MAX_DEVICES];
static int initialised;

static struct slot* of(nvmlDevice_t h) {
  struct slot* s = (struct slot*)h;
  return (s >= slots && s < slots + MAX_DEVICES) ? s : NULL;
}
/* The reading number of the current read: the utilisation call opened it. */
static unsigned long long k_of(struct slot* s) { return s->k == 0 ? 0 : s->k - 1; }

nvmlReturn_t nvmlInit_v2(void) {
  for (unsigned int i = 0; i < MAX_DEVICES; ++i) slots[i].d = i;
  energy_start_clock();
  initialised = 1;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlShutdown(void) {
  initialised = 0;
  return NVML_SUCCESS;
}
const char* nvmlErrorString(nvmlReturn_t r) {
  return r == NVML_SUCCESS ? "Success" : "stand-in error";
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* n) {
  if (!initialised) return NVML_ERROR_UNINITIALIZED;
  *n = count();
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t* h) {
  if (i >= count()) return NVML_ERROR_INVALID_ARGUMENT;
  *h = (nvmlDevice_t)&slots[i];
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t h, char* name, unsigned int len) {
  struct slot* s = of(h);
  if (!s) return NVML_ERROR_INVALID_ARGUMENT;
  snprintf(name, len, "Stand-in NVML GPU %u", s->d);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t h, char* uuid, unsigned int len) {
  struct slot* s = of(h);
  if (!s) return NVML_ERROR_INVALID_ARGUMENT;
  snprintf(uuid, len, "GPU-5ca1ab1e-0000-4000-8000-%012u", s->d);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t h, nvmlUtilization_t* u) {
  struct slot* s = of(h);
  if (!s) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned long long k = s->k++;
  u->gpu = (unsigned int)((k * 7 + s->d * 50) % 101);
  u->memory = (unsigned int)((k * 3 + s->d * 10) % 101);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t h, nvmlMemory_t* m) {
  struct slot* s = of(h);
  if (!s) return NVML_ERROR_INVALID_ARGUMENT;
  m->total = 80000000000ull;
  m->used = (1000 + 10 * k_of(s) + s->d) * 1000000ull;
  m->free = m->total - m->used;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t h, unsigned int* mw) {
  struct slot* s = of(h);
  if (!s) return NVML_ERROR_INVALID_ARGUMENT;
  *mw = (unsigned int)(100000 + 1000 * k_of(s) + 500 * s->d);
  return NVML_SUCCESS;
}
/* mJ: the energy stand-in's microjoules, from a start of 1 MJ (a driver loaded a while ago). */
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t h, unsigned long long* mj) {
  struct slot* s = of(h);
  if (!s) return NVML_ERROR_INVALID_ARGUMENT;
  if (!energy_has_counter(s->d)) return NVML_ERROR_NOT_SUPPORTED;
  *mj = 1000000000ull + energy_microjoules(s->d) / 1000;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t h, nvmlTemperatureSensors_t sensor,
                                      unsigned int* t) {
  struct slot* s = of(h);
  if (!s || sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  *t = (unsigned int)(40 + k_of(s) % 30 + s->d);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t h, nvmlClockType_t type, unsigned int* mhz) {
  struct slot* s = of(h);
  if (!s) return NVML_ERROR_INVALID_ARGUMENT;
  if (type == NVML_CLOCK_SM)
    *mhz = (unsigned int)(1000 + k_of(s));
  else if (type == NVML_CLOCK_MEM)
    *mhz = 2000 + s->d;
  else
    return NVML_ERROR_NOT_SUPPORTED;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t h, unsigned long long* bits) {
  struct slot* s = of(h);
  if (!s) return NVML_ERROR_INVALID_ARGUMENT;
  *bits = (k_of(s) % 2) ? 0x4ull : 0x1ull; /* SW power cap / GPU idle */
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t h, nvmlPcieUtilCounter_t c,
                                         unsigned int* kb) {
  struct slot* s = of(h);
  if (!s) return NVML_ERROR_INVALID_ARGUMENT;
  *kb = (unsigned int)(c == NVML_PCIE_UTIL_TX_BYTES ? 1000 * k_of(s) + s->d : 2000 * k_of(s));
  return NVML_SUCCESS;
}
/* NVLink data counters: cumulative KiB, +1 MiB sent and +2 MiB received per reading. */
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t h, int n, nvmlFieldValue_t* values) {
  struct slot* s = of(h);
  if (!s) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned long long f = ++s->fields;
  for (int i = 0; i < n; ++i) {
    nvmlFieldValue_t* v = &values[i];
    v->valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
    v->nvmlReturn = NVML_SUCCESS;
    v->latencyUsec = 0;
    v->timestamp = 0;
    if (v->fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX && v->scopeId == 0xffffffffu)
      v->value.ullVal = 1024 * f;
    else if (v->fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX && v->scopeId == 0xffffffffu)
      v->value.ullVal = 2048 * f;
    else
      v->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
  }
  return NVML_SUCCESS;
}
