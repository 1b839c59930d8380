#pragma once
// tx_info JSON <-> Tx (docs/ARCHITECTURE.md "Tx types and tx_info"): Lighter's PascalCase fields
// per tx type, `Sig` as base64 of the 64-byte Ed25519 signature, `L2TxAttributes` keyed by decimal
// type. Operator txs (admin listener) use the same form with their own fields.
#include <string>
#include <string_view>

#include "tachyon/api/crypto.hpp"
#include "tachyon/core/reject.hpp"
#include "tachyon/engine/tx.hpp"

namespace tachyon::api {

struct SignedTx {
  Tx tx;
  Signature sig{};
  bool has_sig = false;
};

// Parses `json` (an object) as a tx of `tx_type`. On failure returns the reject code (21501 for
// malformed input, 21505 for an unsupported type) and a message naming the field.
Reject parse_tx_info(int tx_type, std::string_view json, SignedTx& out, std::string& error);
// The tx_info JSON of a tx (what tachyon-cli prints and tests send); `sig` may be null.
std::string tx_info_json(const Tx& tx, const Signature* sig);
// Lighter's tx type numbers that tachyon accepts from users / from the operator.
bool is_user_tx_type(int t);
bool is_operator_tx_type(int t);

}  // namespace tachyon::api
