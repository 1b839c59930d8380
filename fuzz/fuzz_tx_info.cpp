// libFuzzer: the api's untrusted-text parsers. Byte 0 picks the path:
//   even: tx_info JSON for one of the accepted tx types; whatever parses re-encodes with
//         tx_info_json and parses back to the same Tx (the round trip tachyon-cli relies on);
//   odd:  a request body through parse_form under a multipart, urlencoded or JSON content type.
#include <cstring>
#include <string>

#include "tachyon/api/form.hpp"
#include "tachyon/api/tx_info.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tachyon;
  if (size < 2) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);
  if ((data[0] & 1) == 0) {
    static const int kTypes[] = {1, 8, 9, 12, 13, 14, 15, 16, 17, 20, 28, 60, 61, 62, 99};
    const int type = kTypes[data[1] % (sizeof(kTypes) / sizeof(kTypes[0]))];
    api::SignedTx st;
    std::string err;
    if (api::parse_tx_info(type, text, st, err) != Reject::kOk) {
      if (err.empty()) __builtin_trap();  // a refusal always says why
      return 0;
    }
    const std::string again = api::tx_info_json(st.tx, st.has_sig ? &st.sig : nullptr);
    api::SignedTx back;
    if (api::parse_tx_info(type, again, back, err) != Reject::kOk) __builtin_trap();
    if (std::memcmp(&back.tx, &st.tx, sizeof(Tx)) != 0) __builtin_trap();
    if (back.has_sig != st.has_sig || back.sig != st.sig) __builtin_trap();
    return 0;
  }
  static const char* kTypes[] = {"multipart/form-data; boundary=XyZ", "application/json",
                                 "application/x-www-form-urlencoded", "multipart/form-data"};
  api::FormFields f;
  std::string err;
  if (!api::parse_form(kTypes[data[1] % 4], text, f, err) && err.empty()) __builtin_trap();
  for (const auto& [k, v] : f) {
    if (k.size() > size || v.size() > size) __builtin_trap();  // nothing invented
  }
  return 0;
}
