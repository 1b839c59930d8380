#pragma once
// The primary's newest snapshot, carried through JetStream for followers that start with an
// empty data dir (docs/ARCHITECTURE.md "Cluster"): they start from it and read the journal
// stream after its seq, instead of the whole stream from seq 1.
//
// Stream "<stream>_SNAP", subject "tachyon.<stream>.snap": one snapshot file as chunks of
// 512 KiB, each with headers Tachyon-Snap-Seq (the snapshot's tx seq), Tachyon-Chunk (its
// index), Tachyon-Chunks (how many), Tachyon-Chunk-Crc (crc32c of the chunk) and
// Tachyon-Snap-First (the stream seq of chunk 0). Once the last chunk is stored, the older
// snapshots' chunks are purged: the stream holds the newest complete snapshot, and at most one
// being written after it.
#include <atomic>
#include <cstdint>
#include <string>

#include "tachyon/cluster/nats.hpp"

namespace tachyon::cluster {

// Creates the snapshot stream when it does not exist (file storage, the journal stream's
// replicas).
Status ensure_snapshot_stream(NatsLink& link);

// Publishes the snapshot file at `path` (holding the state after tx `seq`), then purges the
// older ones; gives up between two chunks once `stop` is set. The caller makes sure the journal
// stream holds every tx up to `seq`.
Status publish_snapshot(NatsLink& link, const std::string& path, uint64_t seq,
                        const std::atomic<bool>* stop = nullptr);

// The newest complete snapshot on the stream, written into `dir` under its usual name (synced,
// all or nothing); `seq` 0 when the stream holds none.
Status fetch_snapshot(NatsLink& link, const std::string& dir, uint64_t& seq, uint64_t& bytes);

}  // namespace tachyon::cluster
