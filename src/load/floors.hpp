#pragma once
// The floors a run is judged against, measured by tachyon-load in the same run, before the load
// (docs/PERFORMANCE.md "The server under load"):
//   ping      a JSON {"type":"ping"} answered by the server's api worker, paced at the run's rate
//             on one connection: a WebSocket round trip with no tx in it, and (for a local
//             server) the server's context switches and CPU per ping;
//   verify    one Ed25519 verify of a tx, as the server's api does it (api::verify_tx);
//   fdatasync one 200-byte write over allocated zeros + fdatasync, as the journal's group commit,
//             in a directory on the server's disk (its data dir), paced at the run's rate too: a
//             flush after an idle gap is slower, and the journal's come at the run's pace; and
//             the context switches each costs its caller (the disk's waits: the data's write,
//             then, on a disk with a volatile cache and no FUA, the cache flush).
#include <optional>
#include <string>

#include "server_stats.hpp"
#include "tachyon/api/crypto.hpp"
#include "tachyon/core/histogram.hpp"
#include "tachyon/engine/tx.hpp"

namespace tachyon::load {

struct FloorConfig {
  std::string host = "127.0.0.1";
  int port = 8080;
  double rate = 1000;    // pings per second
  unsigned pings = 0;    // 0: no ping floor
  std::string sync_dir;  // empty: no fdatasync floor
  unsigned syncs = 200;  // paced at `rate`, as the pings
  pid_t server_pid = 0;  // 0: the server's cost is not read
};

struct Floors {
  tachyon::HistogramSnapshot ping, fdatasync;  // ns
  double verify_ns = 0;                 // libsodium's Ed25519 check: the median of 5 rounds of 400
  double verify_tables_ns = 0;          // the server's check, the key's tables built: the same way
  double fdatasync_switches = 0;        // per write + fdatasync, its thread's
  std::optional<ServerCost> ping_cost;  // the server's, over the pings
  std::string sync_dir;
};

// "" or what failed (the server did not answer a ping, the directory is not writable).
std::string measure_floors(const FloorConfig& cfg, const Tx& sample, uint32_t chain_id,
                           Floors& out);

}  // namespace tachyon::load
