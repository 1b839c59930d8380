#pragma once
// An account's open orders as the read side publishes them, in order-index order.
//
// A big list (a market maker's tens of thousands of orders) is an OrderList: chunks of a few
// hundred orders, shared between successive versions. The apply thread rebuilds only the chunks
// whose key range holds an order that changed since the last version, and copies the chunk table
// (a pointer per chunk), so a new version costs what changed plus a pointer per chunk, not the
// list (10 MB at 100k orders). A small list is chunks of a few orders copied on write
// (small_orders.hpp), or at start the view's own vector (OrderRange covers the three).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <vector>

#include "tachyon/engine/update.hpp"

namespace tachyon::pipe {

struct OrderView {
  OrderUpdate o;
  int64_t created_ns = 0;
  int64_t updated_ns = 0;
  bool removed = false;  // in change lists: the order left the book (o.reason says why)
};

class OrderList {
 public:
  using Chunk = std::vector<OrderView>;  // sorted by order index, never empty
  using ChunkPtr = std::shared_ptr<const Chunk>;
  // A rebuilt range is cut into chunks of at most kMax orders, as even as possible; a rebuilt
  // chunk that falls below kMin after removals is rebuilt with its right neighbour (the last
  // chunk has none and may stay small).
  static constexpr size_t kTarget = 256, kMax = 2 * kTarget, kMin = kTarget / 4;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const std::vector<ChunkPtr>& chunks() const { return chunks_; }
  // The order with this index, or nullptr: a binary search on the chunks' first keys, then in one.
  const OrderView* find(OrderIndex id) const {
    auto c = std::upper_bound(firsts_.begin(), firsts_.end(), id);
    if (c == firsts_.begin()) return nullptr;
    const Chunk& ch = *chunks_[static_cast<size_t>(c - firsts_.begin()) - 1];
    auto it = std::lower_bound(ch.begin(), ch.end(), id, [](const OrderView& o, OrderIndex x) {
      return o.o.order_index < x;
    });
    return it != ch.end() && it->o.order_index == id ? &*it : nullptr;
  }

  // The list of `sorted` (in index order), from nothing.
  static std::shared_ptr<const OrderList> from_sorted(const std::vector<OrderView>& sorted) {
    auto out = std::make_shared<OrderList>();
    out->append(sorted.begin(), sorted.end(), sorted.size());
    out->size_ = sorted.size();
    return out;
  }

  // A list equal to `all` (a map of order index -> OrderView, in index order) that shares every
  // chunk of `prev` (null: none) whose key range holds no index of `changed` (the orders added,
  // changed or removed since `prev` was built; sorted here, then cleared).
  template <typename Map>
  static std::shared_ptr<const OrderList> rebuild(const OrderList* prev, const Map& all,
                                                  std::vector<OrderIndex>& changed) {
    auto out = std::make_shared<OrderList>();
    out->size_ = all.size();
    if (prev == nullptr || prev->chunks_.empty()) {
      out->append(all.begin(), all.end(), all.size());
      changed.clear();
      return out;
    }
    std::sort(changed.begin(), changed.end());
    const std::vector<OrderIndex>& firsts = prev->firsts_;
    const size_t n = firsts.size();
    out->chunks_.reserve(n + 2);
    out->firsts_.reserve(n + 2);
    // Chunk c holds the keys in [firsts[c], firsts[c + 1]); the first one also those below it.
    auto chunk_of = [&](OrderIndex id) {
      const auto it = std::upper_bound(firsts.begin(), firsts.end(), id);
      return it == firsts.begin() ? size_t{0} : static_cast<size_t>(it - firsts.begin()) - 1;
    };
    auto range_begin = [&](size_t c) { return c == 0 ? all.begin() : all.lower_bound(firsts[c]); };
    auto range_end = [&](size_t c) { return c >= n ? all.end() : all.lower_bound(firsts[c]); };
    size_t next = 0;  // the chunks of prev before it are in out
    for (size_t k = 0; k < changed.size();) {
      const size_t c = chunk_of(changed[k]);
      for (; next < c; ++next) out->share(*prev, next);
      // The dirty run [c, end): chunk c, then its right neighbours while they hold changed keys
      // too or the run holds too few orders to stand alone. `changed` is sorted, so chunk_of
      // of it never decreases.
      size_t end = c + 1;
      const auto from = range_begin(c);
      for (;;) {
        while (k < changed.size() && chunk_of(changed[k]) < end) ++k;
        if (end < n && k < changed.size() && chunk_of(changed[k]) == end) {
          ++end;
          continue;
        }
        const auto to = range_end(end);
        const size_t count = static_cast<size_t>(std::distance(from, to));
        if (count < kMin && end < n) {
          ++end;
          continue;
        }
        out->append(from, to, count);
        break;
      }
      next = end;
    }
    for (; next < n; ++next) out->share(*prev, next);
    changed.clear();
    return out;
  }

 private:
  void share(const OrderList& prev, size_t c) {
    chunks_.push_back(prev.chunks_[c]);
    firsts_.push_back(prev.firsts_[c]);
  }
  // Appends [from, to) (`count` orders) as chunks of at most kMax, as even as possible.
  template <typename It>
  void append(It from, It to, size_t count) {
    if (count == 0) return;
    const size_t pieces = (count + kMax - 1) / kMax;
    for (size_t p = 0; p < pieces; ++p) {
      const size_t take = count / pieces + (p < count % pieces ? 1 : 0);
      auto ch = std::make_shared<Chunk>();
      ch->reserve(take);
      for (size_t i = 0; i < take && from != to; ++i, ++from) ch->push_back(view_of(*from));
      firsts_.push_back(ch->front().o.order_index);
      chunks_.push_back(std::move(ch));
    }
  }
  static const OrderView& view_of(const OrderView& v) { return v; }
  template <typename K>
  static const OrderView& view_of(const std::pair<K, OrderView>& kv) {
    return kv.second;
  }

  std::vector<ChunkPtr> chunks_;
  std::vector<OrderIndex> firsts_;  // each chunk's first order index
  size_t size_ = 0;
};

// A chunk of a small order list (small_orders.hpp): up to kCapacity orders in index order.
struct SmallOrderChunk {
  static constexpr size_t kCapacity = 8;
  uint32_t n = 0;
  uint64_t born = 0;  // SmallOrders: made after its list's last publication, it is still private
  std::array<OrderView, kCapacity> v;
  const OrderView* data() const { return v.data(); }
  size_t size() const { return n; }
};

// What AccountView::order_list() returns: the view's own list, its small list's chunks or its
// shared OrderList, iterated the same way (index order). Valid while the view is.
class OrderRange {
 public:
  OrderRange(const std::vector<OrderView>& own) : own_(&own) {}  // NOLINT: implicit
  explicit OrderRange(const OrderList& big)
      : big_(&big), shared_(big.chunks().data()), chunks_(big.chunks().size()), size_(big.size()) {}
  // `chunks` (in index order) hold `size` orders.
  OrderRange(const std::vector<const SmallOrderChunk*>& chunks, size_t size)
      : small_(chunks.data()), chunks_(chunks.size()), size_(size) {}

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = OrderView;
    using difference_type = std::ptrdiff_t;
    using pointer = const OrderView*;
    using reference = const OrderView&;
    const_iterator() = default;
    reference operator*() const { return *cur_; }
    pointer operator->() const { return cur_; }
    const_iterator& operator++() {
      if (++cur_ == end_) load(chunk_ + 1);
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator t = *this;
      ++*this;
      return t;
    }
    bool operator==(const const_iterator& o) const { return cur_ == o.cur_; }

   private:
    friend class OrderRange;
    // Chunk i of the table and on (one of shared_ / small_; an own list is one chunk); a null
    // cur_ is the end.
    void load(size_t i) {
      chunk_ = i;
      if (chunk_ >= chunks_) {
        cur_ = end_ = nullptr;
        return;
      }
      if (shared_ != nullptr) {
        cur_ = shared_[i]->data();
        end_ = cur_ + shared_[i]->size();
      } else {
        cur_ = small_[i]->data();
        end_ = cur_ + small_[i]->size();
      }
    }
    const OrderView* cur_ = nullptr;
    const OrderView* end_ = nullptr;
    const OrderList::ChunkPtr* shared_ = nullptr;
    const SmallOrderChunk* const* small_ = nullptr;
    size_t chunk_ = 0, chunks_ = 0;
  };

  const_iterator begin() const {
    const_iterator it;
    if (own_ != nullptr) {
      if (!own_->empty()) {  // one chunk: the end follows it
        it.cur_ = own_->data();
        it.end_ = own_->data() + own_->size();
        it.chunks_ = 1;
      }
      return it;
    }
    it.shared_ = shared_;
    it.small_ = small_;
    it.chunks_ = chunks_;
    it.load(0);
    return it;
  }
  const_iterator end() const { return {}; }
  size_t size() const { return own_ != nullptr ? own_->size() : size_; }
  bool empty() const { return size() == 0; }
  const OrderView* find(OrderIndex id) const {
    if (big_ != nullptr) return big_->find(id);
    for (const OrderView& o : *this)
      if (o.o.order_index == id) return &o;
    return nullptr;
  }

 private:
  const std::vector<OrderView>* own_ = nullptr;
  const OrderList* big_ = nullptr;
  const OrderList::ChunkPtr* shared_ = nullptr;
  const SmallOrderChunk* const* small_ = nullptr;
  size_t chunks_ = 0, size_ = 0;
};

}  // namespace tachyon::pipe
