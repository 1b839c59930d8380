// The newest snapshot through JetStream (include/tachyon/cluster/snapshot_stream.hpp).
#include "tachyon/cluster/snapshot_stream.hpp"

#include <nats/nats.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "tachyon/core/crc32c.hpp"
#include "tachyon/store/snapshot.hpp"

namespace tachyon::cluster {

namespace {

constexpr size_t kChunkBytes = 512 << 10;  // under JetStream's default 1 MiB payload limit

std::string snap_stream(const NatsLink& l) { return l.config().stream + "_SNAP"; }
std::string snap_subject(const NatsLink& l) { return "tachyon." + l.config().stream + ".snap"; }

struct Chunk {
  uint64_t snap_seq = 0, index = 0, count = 0, crc = 0, first = 0;
};

Chunk chunk_of(natsMsg* m) {
  return Chunk{header_u64(m, "Tachyon-Snap-Seq"), header_u64(m, "Tachyon-Chunk"),
               header_u64(m, "Tachyon-Chunks"), header_u64(m, "Tachyon-Chunk-Crc"),
               header_u64(m, "Tachyon-Snap-First")};
}

using MsgPtr = std::unique_ptr<natsMsg, decltype(&natsMsg_Destroy)>;

Status get_msg(NatsLink& link, uint64_t stream_seq, MsgPtr& out) {
  natsMsg* m = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  const natsStatus s =
      js_GetMsg(&m, link.js(), snap_stream(link).c_str(), stream_seq, nullptr, &jerr);
  if (s != NATS_OK) return nats_error("snapshot chunk at " + std::to_string(stream_seq), s, jerr);
  out.reset(m);
  return Status();
}

Status publish_chunk(NatsLink& link, const uint8_t* data, size_t n, uint64_t seq, uint64_t index,
                     uint64_t count, uint64_t first, uint64_t& stream_seq) {
  natsMsg* m = nullptr;
  natsStatus s = natsMsg_Create(&m, snap_subject(link).c_str(), nullptr,
                                reinterpret_cast<const char*>(data), static_cast<int>(n));
  auto set = [&](const char* k, uint64_t v) {
    if (s == NATS_OK) s = natsMsgHeader_Set(m, k, std::to_string(v).c_str());
  };
  set("Tachyon-Snap-Seq", seq);
  set("Tachyon-Chunk", index);
  set("Tachyon-Chunks", count);
  set("Tachyon-Chunk-Crc", crc32c(data, n));
  if (first != 0) set("Tachyon-Snap-First", first);
  const std::string id = "snap-" + std::to_string(seq) + "-" + std::to_string(index);
  if (s == NATS_OK) s = natsMsgHeader_Set(m, "Nats-Msg-Id", id.c_str());
  jsPubAck* ack = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  if (s == NATS_OK) s = js_PublishMsg(&ack, link.js(), m, nullptr, &jerr);
  if (m != nullptr) natsMsg_Destroy(m);
  if (s != NATS_OK)
    return nats_error("publishing snapshot chunk " + std::to_string(index), s, jerr);
  stream_seq = ack->Sequence;
  jsPubAck_Destroy(ack);
  return Status();
}

// The newest complete snapshot's last chunk (null: none).
Status newest_complete(NatsLink& link, MsgPtr& last) {
  natsMsg* m = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_GetLastMsg(&m, link.js(), snap_stream(link).c_str(), snap_subject(link).c_str(),
                               nullptr, &jerr);
  if (s == NATS_NOT_FOUND || jerr == JSNoMessageFoundErr) return Status();
  if (s != NATS_OK) return nats_error("the newest snapshot chunk", s, jerr);
  last.reset(m);
  const Chunk c = chunk_of(m);
  if (c.count != 0 && c.index + 1 == c.count) return Status();
  // A newer snapshot is being written: the one before it ends right before its first chunk.
  const uint64_t first = c.index == 0 ? natsMsg_GetSequence(m) : c.first;
  last.reset();
  if (first <= 1) return Status();
  if (Status s = get_msg(link, first - 1, last); !s.ok()) return s;
  const Chunk before = chunk_of(last.get());
  if (before.count == 0 || before.index + 1 != before.count)
    return Status::error("no complete snapshot on the stream (two are being written)");
  return Status();
}

}  // namespace

Status ensure_snapshot_stream(NatsLink& link) {
  return ensure_stream(link, StreamSpec{snap_stream(link), snap_subject(link)});
}

Status publish_snapshot(NatsLink& link, const std::string& path, uint64_t seq,
                        const std::atomic<bool>* stop) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return Status::error("opening " + path + ": " + std::strerror(errno));
  std::fseek(f, 0, SEEK_END);
  const uint64_t size = static_cast<uint64_t>(std::ftell(f));
  std::fseek(f, 0, SEEK_SET);
  const uint64_t count = std::max<uint64_t>(1, (size + kChunkBytes - 1) / kChunkBytes);
  std::vector<uint8_t> buf(kChunkBytes);
  uint64_t first = 0;
  Status st;
  for (uint64_t i = 0; i < count && st.ok(); ++i) {
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) {
      st = Status::error("stopped");  // the chunks published stay an incomplete set: ignored
      break;
    }
    const size_t n = std::fread(buf.data(), 1, kChunkBytes, f);
    if (n == 0 && size != 0) {
      st = Status::error("reading " + path + ": it ended early");
      break;
    }
    uint64_t at = 0;
    st = publish_chunk(link, buf.data(), n, seq, i, count, first, at);
    if (i == 0) first = at;
  }
  std::fclose(f);
  if (!st.ok()) return st;
  jsOptions o;
  jsOptions_Init(&o);
  o.Stream.Purge.Keep = count;  // this snapshot's chunks, the newest messages
  jsErrCode jerr = static_cast<jsErrCode>(0);
  if (natsStatus s = js_PurgeStream(link.js(), snap_stream(link).c_str(), &o, &jerr); s != NATS_OK)
    return nats_error("purging older snapshots", s, jerr);
  return Status();
}

Status fetch_snapshot(NatsLink& link, const std::string& dir, uint64_t& seq, uint64_t& bytes) {
  seq = bytes = 0;
  MsgPtr last(nullptr, &natsMsg_Destroy);
  if (Status s = newest_complete(link, last); !s.ok() || last == nullptr) return s;
  const Chunk end = chunk_of(last.get());
  const uint64_t first = end.count == 1 ? natsMsg_GetSequence(last.get()) : end.first;
  const std::string path = store::snapshot_path(dir, end.snap_seq), tmp = path + ".tmp";
  store::Disk& disk = store::posix_disk();
  int fd = -1;
  if (Status s = disk.open(tmp, store::OpenMode::kCreateTruncate, fd); !s.ok()) return s;
  Status st;
  for (uint64_t i = 0; i < end.count && st.ok(); ++i) {
    MsgPtr m(nullptr, &natsMsg_Destroy);
    if (st = get_msg(link, first + i, m); !st.ok()) break;
    const Chunk c = chunk_of(m.get());
    const auto* data = reinterpret_cast<const uint8_t*>(natsMsg_GetData(m.get()));
    const size_t n = static_cast<size_t>(natsMsg_GetDataLength(m.get()));
    if (c.snap_seq != end.snap_seq || c.index != i || crc32c(data, n) != c.crc) {
      st = Status::error("snapshot chunk " + std::to_string(i) + " of seq " +
                         std::to_string(end.snap_seq) + " is damaged or out of place");
    } else {
      st = disk.write(fd, data, n);
    }
    bytes += n;
  }
  if (st.ok()) st = disk.sync(fd);
  disk.close(fd);
  if (st.ok()) st = disk.rename(tmp, path);
  if (st.ok()) st = disk.sync_dir(dir);
  if (!st.ok()) {
    (void)disk.remove(tmp);
    return st;
  }
  seq = end.snap_seq;
  return Status();
}

}  // namespace tachyon::cluster
