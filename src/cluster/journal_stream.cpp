// The journal's publisher and follower on JetStream (include/tachyon/cluster/journal_stream.hpp).
#include "tachyon/cluster/journal_stream.hpp"

#include <nats/nats.h>
#include <pthread.h>

#include <chrono>
#include <cstring>

#include "tachyon/core/assert.hpp"
#include "tachyon/store/journal.hpp"

namespace tachyon::cluster {

namespace {
int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

JournalPublisher::JournalPublisher(NatsLink& link, Config cfg)
    : link_(link), cfg_(std::move(cfg)), last_stream_seq_(cfg_.expected_stream_seq) {
  stats_.last_stream_seq = last_stream_seq_;
  stats_.replicated_seq = cfg_.stream_tx_seq;
}

JournalPublisher::~JournalPublisher() { stop(); }

Status JournalPublisher::publish_now(const std::vector<uint8_t>& frames, uint64_t first,
                                     uint64_t last, int attempts) {
  Outcome o = Outcome::kRetry;
  for (int i = 0; i < attempts && o == Outcome::kRetry; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(cfg_.retry_ms));
    o = publish(frames, first, last);
  }
  owner_.release();  // the thread start() makes owns it from here
  if (o == Outcome::kStored) {
    std::lock_guard lk(mu_);
    ++stats_.messages;
    stats_.last_stream_seq = last_stream_seq_;
    stats_.replicated_seq = last;
    return Status();
  }
  return Status::error((o == Outcome::kFenced ? "fenced off: " : "not stored: ") +
                       stats().last_error);
}

void JournalPublisher::start() {
  thread_ = std::thread([this] {
    (void)pthread_setname_np(pthread_self(), "replicator");
    run();
  });
}

void JournalPublisher::stop() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  space_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void JournalPublisher::send(store::Journal& journal, uint64_t first, uint64_t last,
                            const uint8_t* frames, size_t n) {
  std::unique_lock lk(mu_);
  journal_ = &journal;
  // Back-pressure: the journal's writer waits, then its buffer fills, then the sequencer.
  space_cv_.wait(lk, [&] {
    return queued_bytes_ + n <= cfg_.max_queued_bytes || queue_.empty() || stop_ || stats_.fenced;
  });
  if (stop_ || stats_.fenced) return;  // never stored, so never acknowledged
  // A group commit larger than a message (a burst taken in one round) goes as several batches,
  // cut between frames: one frame per tx, seqs consecutive from `first`.
  const int64_t now = steady_ns();
  size_t off = 0;
  uint64_t seq = first;
  while (off < n) {
    const size_t start = off;
    const uint64_t from = seq;
    while (off < n) {
      uint32_t len = 0;
      std::memcpy(&len, frames + off, 4);
      const size_t frame = store::kFrameHeaderSize + len;
      if (off > start && off - start + frame > cfg_.max_message_bytes) break;
      off += frame;
      ++seq;
    }
    queue_.push_back(Batch{from, seq - 1, std::vector<uint8_t>(frames + start, frames + off), now});
  }
  TACHYON_ASSERT(seq == last + 1 && off == n, "a group commit's frames and seqs disagree");
  queued_bytes_ += n;
  lk.unlock();
  work_cv_.notify_one();
}

size_t JournalPublisher::take(std::vector<uint8_t>& payload, uint64_t& first, uint64_t& last) {
  std::unique_lock lk(mu_);
  work_cv_.wait(lk, [&] { return !queue_.empty() || stop_; });
  if (stop_) return 0;
  payload.clear();
  size_t k = 0;
  for (const Batch& b : queue_) {
    if (k > 0 && payload.size() + b.frames.size() > cfg_.max_message_bytes) break;
    payload.insert(payload.end(), b.frames.begin(), b.frames.end());
    if (k == 0) first = b.first;
    last = b.last;
    ++k;
  }
  return k;
}

// One attempt. The expected last seq is set as a header so that an empty stream (0) is expected
// too; the message id makes a retry of a message that was stored (its ack lost) a duplicate.
JournalPublisher::Outcome JournalPublisher::publish(const std::vector<uint8_t>& payload,
                                                    uint64_t first, uint64_t last) {
  TACHYON_OWNER_ONLY(owner_);
  const NatsConfig& c = link_.config();
  natsMsg* m = nullptr;
  natsStatus s =
      natsMsg_Create(&m, c.subject.c_str(), nullptr, reinterpret_cast<const char*>(payload.data()),
                     static_cast<int>(payload.size()));
  const std::string id = cfg_.term + "-" + std::to_string(first) + "-" + std::to_string(last);
  if (s == NATS_OK) s = natsMsgHeader_Set(m, "Nats-Msg-Id", id.c_str());
  if (s == NATS_OK)
    s = natsMsgHeader_Set(m, "Nats-Expected-Last-Sequence",
                          std::to_string(last_stream_seq_).c_str());
  if (s == NATS_OK) s = natsMsgHeader_Set(m, "Tachyon-First-Seq", std::to_string(first).c_str());
  if (s == NATS_OK) s = natsMsgHeader_Set(m, "Tachyon-Last-Seq", std::to_string(last).c_str());
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = c.request_timeout_ms;
  jsPubAck* ack = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  if (s == NATS_OK) s = js_PublishMsg(&ack, link_.js(), m, &po, &jerr);
  natsMsg_Destroy(m);
  if (s == NATS_OK) {
    last_stream_seq_ = ack->Sequence;
    jsPubAck_Destroy(ack);
    return Outcome::kStored;
  }
  const Status err = nats_error(
      "publishing seqs " + std::to_string(first) + "-" + std::to_string(last) + " to " + c.stream,
      s, jerr);
  std::lock_guard lk(mu_);
  stats_.last_error = err.message();
  if (jerr == JSStreamWrongLastSequenceErr) return Outcome::kFenced;
  ++stats_.retries;
  return Outcome::kRetry;
}

void JournalPublisher::stored(size_t batches, uint64_t last) {
  store::Journal* j = nullptr;
  {
    std::lock_guard lk(mu_);
    for (size_t i = 0; i < batches; ++i) {
      queued_bytes_ -= queue_.front().frames.size();
      queue_.pop_front();
    }
    ++stats_.messages;
    stats_.last_stream_seq = last_stream_seq_;
    stats_.replicated_seq = last;
    j = journal_;
  }
  space_cv_.notify_all();
  j->replicated(last);
}

void JournalPublisher::run() {
  TACHYON_OWNER_ONLY(owner_);
  std::vector<uint8_t> payload;
  for (;;) {
    uint64_t first = 0, last = 0;
    const size_t k = take(payload, first, last);
    if (k == 0) return;  // stopping
    for (;;) {
      const Outcome o = publish(payload, first, last);
      if (o == Outcome::kStored) {
        stored(k, last);
        break;
      }
      if (o == Outcome::kFenced) {
        store::Journal* j = nullptr;
        {
          std::lock_guard lk(mu_);
          stats_.fenced = true;
          j = journal_;
        }
        space_cv_.notify_all();
        j->replication_failed(
            "not the primary: the journal stream moved past this node's last message (another "
            "primary writes it); nothing after seq " +
            std::to_string(first - 1) + " is acknowledged here (" + stats().last_error + ")");
        return;
      }
      std::unique_lock lk(mu_);
      if (work_cv_.wait_for(lk, std::chrono::milliseconds(cfg_.retry_ms), [&] { return stop_; }))
        return;
    }
  }
}

JournalPublisher::Stats JournalPublisher::stats() const {
  std::lock_guard lk(mu_);
  Stats s = stats_;
  s.waiting_ms = queue_.empty() ? 0 : (steady_ns() - queue_.front().queued_ns) / 1'000'000;
  return s;
}

// ---- the follower ----

Status StreamFollower::open(NatsLink& link, uint64_t after_tx_seq,
                            std::unique_ptr<StreamFollower>& out) {
  std::unique_ptr<StreamFollower> f(new StreamFollower());
  f->link_ = &link;
  f->last_seq_ = after_tx_seq;
  uint64_t from = 0;
  if (Status s = find_message_after(link, after_tx_seq, from); !s.ok()) return s;
  if (from != 0) {
    if (Status s = f->subscribe(from); !s.ok()) return s;
  }
  out = std::move(f);
  return Status();
}

StreamFollower::~StreamFollower() {
  if (sub_ != nullptr) natsSubscription_Destroy(sub_);
}

Status StreamFollower::subscribe(uint64_t from_stream_seq) {
  const NatsConfig& c = link_->config();
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = c.stream.c_str();
  so.Ordered = true;
  so.Config.DeliverPolicy = js_DeliverByStartSequence;
  so.Config.OptStartSeq = from_stream_seq;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  const natsStatus s = js_SubscribeSync(&sub_, link_->js(), c.subject.c_str(), nullptr, &so, &jerr);
  if (s != NATS_OK) return nats_error("following " + c.stream, s, jerr);
  started_ = true;
  return Status();
}

Status StreamFollower::next(int timeout_ms, const std::function<void(const Tx&)>& f, bool& got) {
  TACHYON_OWNER_ONLY(owner_);
  got = false;
  if (!started_) {  // the stream was empty: look again for the first message past last_seq_
    uint64_t from = 0;
    if (Status s = find_message_after(*link_, last_seq_, from); !s.ok()) return s;
    if (from == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(timeout_ms, 50)));
      return Status();
    }
    if (Status s = subscribe(from); !s.ok()) return s;
  }
  natsMsg* m = nullptr;
  const natsStatus s = natsSubscription_NextMsg(&m, sub_, timeout_ms);
  if (s == NATS_TIMEOUT) return Status();
  if (s != NATS_OK) return nats_error("reading " + link_->config().stream, s);
  got = true;
  jsMsgMetaData* meta = nullptr;
  if (natsMsg_GetMetaData(&meta, m) == NATS_OK) {
    stream_seq_ = meta->Sequence.Stream;
    jsMsgMetaData_Destroy(meta);
  }
  const uint64_t first = header_u64(m, "Tachyon-First-Seq");
  const uint64_t last = header_u64(m, "Tachyon-Last-Seq");
  Status st;
  if (first == 0 || last < first) {
    st =
        Status::error("journal stream message " + std::to_string(stream_seq_) + " has no tx range");
  } else if (first > last_seq_ + 1) {
    st = Status::error("journal stream gap: message " + std::to_string(stream_seq_) +
                       " starts at seq " + std::to_string(first) + ", this node is at " +
                       std::to_string(last_seq_));
  } else {
    st =
        decode_batch(reinterpret_cast<const uint8_t*>(natsMsg_GetData(m)),
                     static_cast<size_t>(natsMsg_GetDataLength(m)), first, last, [&](const Tx& tx) {
                       if (tx.h.seq <= last_seq_) return;  // already had it
                       f(tx);
                       last_seq_ = tx.h.seq;
                     });
  }
  natsMsg_Destroy(m);
  damaged_ = !st.ok();
  return st;
}

}  // namespace tachyon::cluster
