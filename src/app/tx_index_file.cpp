#include "tx_index_file.hpp"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>

#include "binary_io.hpp"
#include "tachyon/api/crypto.hpp"
#include "tachyon/codec/codec.hpp"
#include "tachyon/core/crc32c.hpp"
#include "tachyon/store/disk.hpp"

namespace tachyon::app {

namespace {

constexpr char kMagic[8] = {'T', 'X', 'I', 'N', 'D', 'E', 'X', '1'};

std::string path_of(const std::string& dir) { return dir + "/txindex.bin"; }

}  // namespace

// Layout (little endian): magic, count u64, records, then CRC-32C u32 of everything before it.
// A record: hash (40 bytes), seq, block, queued_ms, executed_ms, order_index (8 bytes each),
// reject u16, tx length u32, the tx in the codec's format.
Status save_tx_index(const std::string& data_dir, const TxRecords& records) {
  std::string out(kMagic, sizeof kMagic);
  put<uint64_t>(out, records.size());
  std::vector<uint8_t> buf;
  for (const auto& [hash, r] : records) {
    std::array<uint8_t, 40> h{};
    if (!api::from_hex(hash, h.data(), h.size())) continue;
    out.append(reinterpret_cast<const char*>(h.data()), h.size());
    put<uint64_t>(out, r.seq);
    put<uint64_t>(out, r.block);
    put<int64_t>(out, r.queued_ms);
    put<int64_t>(out, r.executed_ms);
    put<uint64_t>(out, r.order_index);
    put<uint16_t>(out, static_cast<uint16_t>(r.reject));
    buf.resize(codec::encoded_size(r.tx));
    const size_t n = codec::encode(r.tx, buf);
    put<uint32_t>(out, static_cast<uint32_t>(n));
    out.append(reinterpret_cast<const char*>(buf.data()), n);
  }
  put<uint32_t>(out, crc32c(reinterpret_cast<const uint8_t*>(out.data()), out.size()));
  // all or nothing: a temp file, synced, renamed over the old one
  return store::posix_disk().write_file_atomic(path_of(data_dir),
                                               std::vector<uint8_t>(out.begin(), out.end()), {});
}

Status load_tx_index(const std::string& data_dir, TxRecords& out) {
  out.clear();
  const std::string path = path_of(data_dir);
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status();  // none: nothing to restore
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (all.size() < sizeof kMagic + 12 || std::memcmp(all.data(), kMagic, sizeof kMagic) != 0)
    return Status::error(path + ": not a tx index file");
  uint32_t crc = 0;
  std::memcpy(&crc, all.data() + all.size() - 4, 4);
  if (crc32c(reinterpret_cast<const uint8_t*>(all.data()), all.size() - 4) != crc)
    return Status::error(path + ": checksum mismatch (damaged)");
  std::string_view in(all.data() + sizeof kMagic, all.size() - sizeof kMagic - 4);
  uint64_t count = 0;
  if (!get(in, count)) return Status::error(path + ": truncated");
  for (uint64_t i = 0; i < count; ++i) {
    std::array<uint8_t, 40> h{};
    if (in.size() < h.size()) return Status::error(path + ": truncated");
    std::memcpy(h.data(), in.data(), h.size());
    in.remove_prefix(h.size());
    api::ApiShared::TxRecord r;
    uint16_t reject = 0;
    uint32_t len = 0;
    if (!get(in, r.seq) || !get(in, r.block) || !get(in, r.queued_ms) || !get(in, r.executed_ms) ||
        !get(in, r.order_index) || !get(in, reject) || !get(in, len) || in.size() < len)
      return Status::error(path + ": truncated");
    const auto d = codec::decode(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(in.data()), len), r.tx);
    if (!d.ok()) return Status::error(path + ": a tx does not decode");
    in.remove_prefix(len);
    r.reject = static_cast<Reject>(reject);
    out.emplace_back(api::to_hex(h.data(), h.size()), r);
  }
  return Status();
}

}  // namespace tachyon::app
