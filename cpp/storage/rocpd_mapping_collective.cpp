// Collective and point-to-point calls (RecordKind::kCollective, captured by capture/nccl/):
// stored as ROCm's writer stores RCCL API calls — a rocpd_event of the record's category
// (RCCL_API), a rocpd_region named by the API function on the calling thread, and the call's
// arguments in rocpd_arg (position, type, name, value as text). Arguments the library did not
// tell (no stream, no algorithm) are left out rather than stored as made-up values.
#include <cinttypes>
#include <cstdio>

#include "rocpd_mapping.hpp"

namespace rocprof::rocpd {

namespace {
std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, v);
  return buf;
}
}  // namespace

void Mapping::collective(const Record& r, RecordRows* out) {
  const CollectiveData& c = r.coll;
  out->kind = RecordKind::kCollective;
  out->event = event(r, kEmptyJson);
  out->region = RegionRow{
      next_region_id_++,           pid_,          r.tid,        static_cast<int64_t>(r.start),
      static_cast<int64_t>(r.end), Id{r.name_id}, out->event.id};
  const int64_t ev = out->event.id;
  int64_t pos = 0;
  auto add = [&](std::string_view type, std::string_view name, std::string value) {
    out->args.push_back(ArgRow{ev, pos++, type, name, std::move(value)});
  };
  // The API's own parameters first, in its order (ncclAllReduce(..., count, datatype, op,
  // comm, stream)); the reduction op is not part of NCCL's profiler descriptors.
  add("size_t", "count", std::to_string(c.count));
  add("ncclDataType_t", "datatype", c.datatype_id != 0 ? text(c.datatype_id) : std::string());
  if (c.root >= 0) add("int", "root", std::to_string(c.root));
  if (c.peer >= 0) add("int", "peer", std::to_string(c.peer));
  add("ncclComm_t", "comm", hex(c.comm_hash));
  if (c.stream != 0) add("cudaStream_t", "stream", hex(c.stream));
  // What the profiler interface adds: the size in bytes and where the call ran.
  add("size_t", "bytes", std::to_string(c.bytes));
  add("int", "rank", std::to_string(c.rank));
  add("int", "nranks", std::to_string(c.nranks));
  if (c.nnodes != 0) add("int", "nnodes", std::to_string(c.nnodes));
  if (c.comm_name_id != 0) add("const char*", "comm_name", text(c.comm_name_id));
  if (c.algo_id != 0) add("const char*", "algo", text(c.algo_id));
  if (c.proto_id != 0) add("const char*", "proto", text(c.proto_id));
  if (c.nchannels != 0) add("int", "nchannels", std::to_string(c.nchannels));
  if (c.seq != UINT64_MAX) add("uint64_t", "seq", std::to_string(c.seq));
}

}  // namespace rocprof::rocpd
