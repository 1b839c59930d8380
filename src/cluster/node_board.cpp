// Every node's status over core NATS (include/tachyon/cluster/node_board.hpp).
#include "tachyon/cluster/node_board.hpp"

#include <nats/nats.h>

#include <charconv>

#include "tachyon/core/clock.hpp"

namespace tachyon::cluster {

namespace {
// Nodes that fell silent stay on the board (shown with their age) up to this many.
constexpr size_t kMaxNodes = 64;

bool next_word(std::string_view& in, std::string_view& word) {
  const size_t sp = in.find(' ');
  if (sp == std::string_view::npos || sp == 0) return false;
  word = in.substr(0, sp);
  in.remove_prefix(sp + 1);
  return true;
}

template <typename T>
bool number(std::string_view w, T& out) {
  const auto r = std::from_chars(w.data(), w.data() + w.size(), out);
  return r.ec == std::errc() && r.ptr == w.data() + w.size();
}
}  // namespace

Status NodeBoard::open(NatsLink& link, const std::string& stream, std::unique_ptr<NodeBoard>& out) {
  std::unique_ptr<NodeBoard> b(new NodeBoard(link, "tachyon." + stream + ".nodes"));
  if (Status s = subscribe(link, b->subject_, &NodeBoard::on_msg, b.get(), b->closing_, b->sub_);
      !s.ok())
    return s;
  out = std::move(b);
  return Status();
}

NodeBoard::~NodeBoard() { close_subscription(sub_, closing_); }

bool NodeBoard::parse(std::string_view body, NodeStatus& out) {
  std::string_view role, applied, lag, lag_ms;
  if (!next_word(body, role) || !next_word(body, applied) || !next_word(body, lag) ||
      !next_word(body, lag_ms) || body.empty() || body.size() > 512)
    return false;
  if (!number(applied, out.applied_seq) || !number(lag, out.lag_txs) || !number(lag_ms, out.lag_ms))
    return false;
  out.role = std::string(role);
  out.node = std::string(body);
  return true;
}

void NodeBoard::on_msg(__natsConnection*, __natsSubscription*, __natsMsg* m, void* closure) {
  auto* self = static_cast<NodeBoard*>(closure);
  NodeStatus st;
  const char* data = natsMsg_GetData(m);
  if (data != nullptr &&
      parse(std::string_view(data, static_cast<size_t>(natsMsg_GetDataLength(m))), st)) {
    st.heard_ns = realtime_ns();
    std::lock_guard lk(self->mu_);
    if (self->nodes_.size() < kMaxNodes || self->nodes_.contains(st.node))
      self->nodes_[st.node] = std::move(st);
  }
  natsMsg_Destroy(m);
}

void NodeBoard::publish(const NodeStatus& mine) {
  const std::string body = mine.role + ' ' + std::to_string(mine.applied_seq) + ' ' +
                           std::to_string(mine.lag_txs) + ' ' + std::to_string(mine.lag_ms) + ' ' +
                           mine.node;
  (void)natsConnection_Publish(link_.conn(), subject_.c_str(), body.data(),
                               static_cast<int>(body.size()));
}

std::vector<NodeStatus> NodeBoard::nodes() const {
  std::lock_guard lk(mu_);
  std::vector<NodeStatus> out;
  out.reserve(nodes_.size());
  for (const auto& [name, st] : nodes_) out.push_back(st);
  return out;
}

}  // namespace tachyon::cluster
