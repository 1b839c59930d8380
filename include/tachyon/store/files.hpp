#pragma once
// Small file helpers with Status results (errno spelled out).
#include <cstdint>
#include <string>
#include <vector>

#include "tachyon/core/status.hpp"

namespace tachyon::store {

Status read_file(const std::string& path, std::vector<uint8_t>& out);
Status truncate_file(const std::string& path, uint64_t size);
Status remove_file(const std::string& path);
Status make_dirs(const std::string& dir);
Status sync_dir(const std::string& dir);
// Writes to path.tmp, fsyncs, renames over path and fsyncs the directory: all or nothing.
Status write_file_atomic(const std::string& path, const std::vector<uint8_t>& head,
                         const std::vector<uint8_t>& body);

}  // namespace tachyon::store
