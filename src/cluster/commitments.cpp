// The primary's block commitments on JetStream (include/tachyon/cluster/commitments.hpp).
#include "tachyon/cluster/commitments.hpp"

#include <nats/nats.h>

#include <cstdio>

namespace tachyon::cluster {

namespace {

std::string blocks_stream(const NatsLink& l) { return l.config().stream + "_BLOCKS"; }
std::string block_subject(const NatsLink& l, uint64_t block) {
  return "tachyon." + l.config().stream + ".blocks." + std::to_string(block);
}

}  // namespace

Status ensure_commitment_stream(NatsLink& link) {
  const std::string subject = "tachyon." + link.config().stream + ".blocks.*";
  return ensure_stream(link, StreamSpec{blocks_stream(link), subject, 1'000'000});
}

Status publish_commitment(NatsLink& link, uint64_t block, const PublishedBlock& b) {
  const std::string body =
      std::to_string(b.first_seq) + " " + std::to_string(b.last_seq) + " " + b.state_root;
  jsPubAck* ack = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  const natsStatus s = js_Publish(&ack, link.js(), block_subject(link, block).c_str(), body.data(),
                                  static_cast<int>(body.size()), nullptr, &jerr);
  if (s != NATS_OK)
    return nats_error("publishing the commitment of block " + std::to_string(block), s, jerr);
  jsPubAck_Destroy(ack);
  return Status();
}

Status published_commitment(NatsLink& link, uint64_t block, PublishedBlock& out, bool& found) {
  found = false;
  natsMsg* m = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  const natsStatus s = js_GetLastMsg(&m, link.js(), blocks_stream(link).c_str(),
                                     block_subject(link, block).c_str(), nullptr, &jerr);
  if (s == NATS_NOT_FOUND || jerr == JSNoMessageFoundErr) return Status();
  if (s != NATS_OK) return nats_error("the commitment of block " + std::to_string(block), s, jerr);
  const std::string body(natsMsg_GetData(m), static_cast<size_t>(natsMsg_GetDataLength(m)));
  natsMsg_Destroy(m);
  unsigned long long first = 0, last = 0;
  char hex[65] = {};
  if (std::sscanf(body.c_str(), "%llu %llu %64s", &first, &last, hex) != 3)
    return Status::error("the commitment of block " + std::to_string(block) + " is malformed");
  out = PublishedBlock{first, last, hex};
  found = true;
  return Status();
}

}  // namespace tachyon::cluster
