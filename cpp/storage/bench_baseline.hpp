// Benchmark B4's baseline: the rows the sink writes for n ROCTx ranges, inserted by the
// plainest loop SQLite allows (two prepared statements, one transaction, same schema and
// pragmas). The sink's sustained rate is judged against this.
#pragma once
#include <cstdint>
#include <string>

namespace rocprof {

// Returns nanoseconds spent; *error set and 0 returned on failure.
uint64_t baseline_bulk_insert(const std::string& path, uint64_t n, std::string* error);

}  // namespace rocprof
