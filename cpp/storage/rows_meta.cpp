// rocpd_metadata and rocpd_string rows.
#include "rocpd_writer.hpp"

namespace rocprof::rocpd {

void Writer::prepare_meta() {
  stmts_[kString] = prepare("INSERT INTO \"rocpd_string{S}\"(id, string) VALUES (?,?)");
  stmts_[kMetaUpdate] = prepare("UPDATE \"rocpd_metadata{S}\" SET value = ? WHERE tag = ?");
  stmts_[kMetaInsert] = prepare("INSERT INTO \"rocpd_metadata{S}\"(tag, value) VALUES (?,?)");
}

void Writer::metadata(const std::string& tag, const std::string& value) {
  bind(stmts_[kMetaUpdate], 1, value);
  bind(stmts_[kMetaUpdate], 2, tag);
  run(stmts_[kMetaUpdate]);
  if (api_->changes(db_) == 0) {
    bind(stmts_[kMetaInsert], 1, tag);
    bind(stmts_[kMetaInsert], 2, value);
    run(stmts_[kMetaInsert]);
  }
}

void Writer::string(uint32_t id, const std::string& text) {
  bind(stmts_[kString], 1, int64_t{id});
  bind(stmts_[kString], 2, text);
  run(stmts_[kString]);
}

}  // namespace rocprof::rocpd
