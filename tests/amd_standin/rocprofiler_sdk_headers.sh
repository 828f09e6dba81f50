#!/usr/bin/env bash
# BUILD CHECK AND TESTS ONLY: a rocprofiler-sdk header set for building rocprof's rocprofiler-sdk
# backend (cpp/capture/rocprofiler_sdk/) and the stand-in SDK of tests/amd_standin/ on a machine
# without ROCm. On a ROCm >= 6.2 machine use its own headers (/opt/rocm/include) instead.
#
#   tests/amd_standin/rocprofiler_sdk_headers.sh PREFIX
#   cmake ... -DROCPROF_ROCPROFILER_SDK_INCLUDE_DIR=PREFIX/include
#
# The headers are taken unchanged from the public ROCm sources (git directories, bare or not):
#   ROCM_SYSTEMS_GIT (ROCm/rocm-systems): projects/rocprofiler-sdk/source/include/rocprofiler-sdk
#       and rocprofiler-sdk-roctx, projects/rocr-runtime/runtime/hsa-runtime/inc (as hsa/) and
#       projects/rocr-runtime/libhsakmt/include/hsakmt
#   HIP_GIT (ROCm/HIP): include/hip;  CLR_GIT (ROCm/clr): hipamd/include/hip
# at the commits ROCM_SYSTEMS_REF, HIP_REF, CLR_REF (default HEAD). The headers those projects
# generate at build time (rocprofiler-sdk/version.h, ext_version.h, rocprofiler-sdk-roctx/
# version.h, hip/hip_version.h) are made from their templates by CMake as the projects' own
# CMake does (rocprofiler_sdk_headers.cmake). PREFIX/SOURCES.txt records the commits used.
set -euo pipefail
prefix=${1:?usage: $0 PREFIX}
systems=${ROCM_SYSTEMS_GIT:-/work/.mirror/ROCm+rocm-systems/repo}
hip=${HIP_GIT:-/work/.mirror/ROCm+HIP/repo}
clr=${CLR_GIT:-/work/.mirror/ROCm+clr/repo}
cmake=${CMAKE:-cmake}
for repo in "$systems" "$hip" "$clr"; do
  git -C "$repo" rev-parse --git-dir >/dev/null || { echo "$0: $repo is not a git directory" >&2; exit 2; }
done
systems_rev=$(git -C "$systems" rev-parse "${ROCM_SYSTEMS_REF:-HEAD}^{commit}")
hip_rev=$(git -C "$hip" rev-parse "${HIP_REF:-HEAD}^{commit}")
clr_rev=$(git -C "$clr" rev-parse "${CLR_REF:-HEAD}^{commit}")
inc="$prefix/include"
rm -rf "$inc"
mkdir -p "$inc/hsa" "$inc/hsakmt" "$inc/hip"

# Extracts the tree at path $3 of commit $2 in repository $1 into folder $4.
extract() {
  git -C "$1" archive "$2:$3" | tar -x -C "$4"
}
sdk=projects/rocprofiler-sdk/source/include
mkdir -p "$inc/rocprofiler-sdk" "$inc/rocprofiler-sdk-roctx"
extract "$systems" "$systems_rev" "$sdk/rocprofiler-sdk" "$inc/rocprofiler-sdk"
extract "$systems" "$systems_rev" "$sdk/rocprofiler-sdk-roctx" "$inc/rocprofiler-sdk-roctx"
extract "$systems" "$systems_rev" projects/rocr-runtime/runtime/hsa-runtime/inc "$inc/hsa"
extract "$systems" "$systems_rev" projects/rocr-runtime/libhsakmt/include/hsakmt "$inc/hsakmt"
extract "$hip" "$hip_rev" include/hip "$inc/hip"
extract "$clr" "$clr_rev" hipamd/include/hip "$inc/hip"
find "$inc" -name CMakeLists.txt -delete

"$cmake" -DINC="$inc" \
  -DSDK_VERSION="$(git -C "$systems" show "$systems_rev:projects/rocprofiler-sdk/VERSION")" \
  -DSDK_REVISION="$systems_rev" \
  -DHIP_VERSION_FILE="$(git -C "$hip" show "$hip_rev:VERSION" | tr '\n' ';')" \
  -DHIP_REVISION="$clr_rev" \
  -DHSA_VERSION="$(git -C "$systems" show "$systems_rev:projects/rocr-runtime/CMakeLists.txt" |
                   sed -n 's/^get_version("\([0-9.]*\)").*/\1/p')" \
  -P "$(dirname "$0")/rocprofiler_sdk_headers.cmake"

{
  echo "ROCm/rocm-systems $systems_rev"
  echo "ROCm/HIP $hip_rev"
  echo "ROCm/clr $clr_rev"
} >"$prefix/SOURCES.txt"
echo "rocprofiler-sdk headers in $inc (sources: $prefix/SOURCES.txt)"
