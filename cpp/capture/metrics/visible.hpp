// Which of a management library's devices this process's GPU runtime sees, in the runtime's
// own numbering: samples are stored on the agent the kernel records use (gpu_agent_id of the
// CUDA/HIP ordinal), so a device must be known by that ordinal.
#pragma once
#include <cstdint>
#include <vector>

#include "capture/metrics/source.hpp"

namespace rocprof::metrics {

// A *_VISIBLE_DEVICES value applied to `order` (library indices, in runtime order): each entry
// an ordinal into `order` or a UUID prefix ("GPU-8a3c..."), as CUDA reads it; an entry that
// names nothing, or a device twice, ends the list there (CUDA's rule). null: `order` as is.
std::vector<uint32_t> apply_visible(const std::vector<GpuDevice>& devices,
                                    const std::vector<uint32_t>& order, const char* value);

// CUDA: CUDA_VISIBLE_DEVICES over NVML's order (PCI bus order, which is CUDA's with
// CUDA_DEVICE_ORDER=PCI_BUS_ID and on machines of one GPU model).
std::vector<uint32_t> cuda_order(const std::vector<GpuDevice>& devices);
// ROCm: ROCR_VISIBLE_DEVICES first, then HIP_VISIBLE_DEVICES (or CUDA_VISIBLE_DEVICES, which
// HIP also reads) over what it left, as the HIP runtime applies them.
std::vector<uint32_t> rocm_order(const std::vector<GpuDevice>& devices);

}  // namespace rocprof::metrics
