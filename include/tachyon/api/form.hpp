#pragma once
// Request decoding helpers: query strings, application/x-www-form-urlencoded and
// multipart/form-data bodies (ccxt sends multipart, the Python SDK urlencoded).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tachyon::api {

using FormFields = std::vector<std::pair<std::string, std::string>>;

std::string url_decode(std::string_view s);
FormFields parse_urlencoded(std::string_view s);
// false when the body is not valid multipart for the boundary in content_type.
bool parse_multipart(std::string_view content_type, std::string_view body, FormFields& out);
// Any of the three (JSON object bodies too: string and number members become fields).
bool parse_form(std::string_view content_type, std::string_view body, FormFields& out,
                std::string& error);
std::optional<std::string> field(const FormFields& f, std::string_view name);

// A request target's query parameter, decoded; nullopt when absent.
std::optional<std::string> query(std::string_view target, std::string_view key);
// The parameter as a whole decimal integer; false when absent or not one.
bool query_i64(std::string_view target, std::string_view key, int64_t& out);
template <typename T>
bool query_int(std::string_view target, std::string_view key, T& out) {
  int64_t x = 0;
  if (!query_i64(target, key, x)) return false;
  out = static_cast<T>(x);
  return true;
}

}  // namespace tachyon::api
