#pragma once
// The api's index of recent txs by hash (GET /api/v1/tx) across a clean restart: saved to
// <data_dir>/txindex.bin when the server stops, loaded when it starts (the journal replay adds
// what came after, e.g. after a crash). A damaged or foreign file is reported and ignored: it
// never stops the server.
#include <string>
#include <utility>
#include <vector>

#include "tachyon/api/worker.hpp"
#include "tachyon/core/status.hpp"

namespace tachyon::app {

using TxRecords = std::vector<std::pair<std::string, api::ApiShared::TxRecord>>;

Status save_tx_index(const std::string& data_dir, const TxRecords& records);
// Empty and ok when there is no file.
Status load_tx_index(const std::string& data_dir, TxRecords& out);

}  // namespace tachyon::app
