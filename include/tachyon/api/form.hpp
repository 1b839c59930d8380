#pragma once
// Request decoding helpers: query strings, application/x-www-form-urlencoded and
// multipart/form-data bodies (ccxt sends multipart, the Python SDK urlencoded).
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

}  // namespace tachyon::api
