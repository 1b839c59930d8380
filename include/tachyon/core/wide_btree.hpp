#pragma once
// absl::btree_map with a larger node: the public alias fixes the node's target size at 256 bytes,
// which holds only 2-3 values of 100+ bytes (an account's OrderView), so walking an account's
// open orders chased a pointer to a new node every 2-3 orders (the read side rebuilds an
// account's order list from that walk on every change). `NodeBytes` is absl's own target-size
// parameter (btree_map.h passes 256); a small tree still starts in a root leaf sized for what it
// holds, so an account with one order does not pay for a 2 KB node. This names
// absl::container_internal types, as btree_map.h itself does: the abseil this project builds
// against is Debian 12's libabsl-dev (20220623), where this is how btree_map is defined.
#include <absl/container/btree_map.h>

namespace tachyon {

template <typename Key, typename Value, typename Compare, typename Alloc, int NodeBytes>
using WideBtreeMap = absl::container_internal::btree_map_container<
    absl::container_internal::btree<absl::container_internal::map_params<
        Key, Value, Compare, Alloc, NodeBytes, /*IsMulti=*/false>>>;

}  // namespace tachyon
