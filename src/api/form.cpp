#include "tachyon/api/form.hpp"

#include "json_scratch.hpp"

#include <simdjson.h>

#include <cctype>

namespace tachyon::api {

std::string url_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

FormFields parse_urlencoded(std::string_view s) {
  FormFields f;
  while (!s.empty()) {
    const size_t amp = s.find('&');
    const std::string_view pair = s.substr(0, amp);
    const size_t eq = pair.find('=');
    if (!pair.empty()) {
      f.emplace_back(url_decode(pair.substr(0, eq)), eq == std::string_view::npos
                                                         ? std::string()
                                                         : url_decode(pair.substr(eq + 1)));
    }
    if (amp == std::string_view::npos) break;
    s.remove_prefix(amp + 1);
  }
  return f;
}

bool parse_multipart(std::string_view ct, std::string_view body, FormFields& out) {
  const size_t b = ct.find("boundary=");
  if (b == std::string_view::npos) return false;
  std::string_view boundary = ct.substr(b + 9);
  if (const size_t semi = boundary.find(';'); semi != std::string_view::npos)
    boundary = boundary.substr(0, semi);
  if (boundary.size() >= 2 && boundary.front() == '"')
    boundary = boundary.substr(1, boundary.size() - 2);
  if (boundary.empty()) return false;
  const std::string delim = "--" + std::string(boundary);
  size_t pos = body.find(delim);
  if (pos == std::string_view::npos) return false;
  for (;;) {
    pos += delim.size();
    if (body.substr(pos, 2) == "--") return true;  // the closing delimiter
    if (body.substr(pos, 2) != "\r\n") return false;
    pos += 2;
    const size_t head_end = body.find("\r\n\r\n", pos);
    if (head_end == std::string_view::npos) return false;
    const std::string_view headers = body.substr(pos, head_end - pos);
    const size_t next = body.find("\r\n" + delim, head_end + 4);
    if (next == std::string_view::npos) return false;
    const std::string_view value = body.substr(head_end + 4, next - head_end - 4);
    const size_t n = headers.find("name=\"");
    if (n != std::string_view::npos) {
      const size_t e = headers.find('"', n + 6);
      if (e == std::string_view::npos) return false;
      out.emplace_back(std::string(headers.substr(n + 6, e - n - 6)), std::string(value));
    }
    pos = next + 2;
  }
}

bool parse_form(std::string_view ct, std::string_view body, FormFields& out, std::string& error) {
  if (ct.find("multipart/form-data") != std::string_view::npos) {
    if (!parse_multipart(ct, body, out)) {
      error = "malformed multipart/form-data body";
      return false;
    }
    return true;
  }
  if (ct.find("application/json") != std::string_view::npos) {
    static thread_local JsonScratch js;
    simdjson::ondemand::document doc;
    simdjson::ondemand::object obj;
    if (js.iterate(body).get(doc) || doc.get_object().get(obj)) {
      error = "the body is not a JSON object";
      return false;
    }
    for (auto f : obj) {
      std::string_view k;
      simdjson::ondemand::value v;
      if (f.unescaped_key().get(k) || f.value().get(v)) {
        error = "malformed JSON body";
        return false;
      }
      std::string_view raw;
      simdjson::ondemand::json_type t;
      if (v.type().get(t)) {
        error = "malformed JSON body";
        return false;
      }
      if (t == simdjson::ondemand::json_type::string) {
        if (v.get_string().get(raw)) {
          error = "malformed JSON body";
          return false;
        }
        out.emplace_back(std::string(k), std::string(raw));
      } else {
        if (simdjson::to_json_string(v).get(raw)) {
          error = "malformed JSON body";
          return false;
        }
        while (!raw.empty() && std::isspace(static_cast<unsigned char>(raw.back())))
          raw.remove_suffix(1);
        out.emplace_back(std::string(k), std::string(raw));
      }
    }
    return true;
  }
  out = parse_urlencoded(body);
  return true;
}

std::optional<std::string> field(const FormFields& f, std::string_view name) {
  for (const auto& [k, v] : f)
    if (k == name) return v;
  return std::nullopt;
}

std::optional<std::string> query(std::string_view target, std::string_view key) {
  const size_t q = target.find('?');
  if (q == std::string_view::npos) return std::nullopt;
  return field(parse_urlencoded(target.substr(q + 1)), key);
}

bool query_i64(std::string_view target, std::string_view key, int64_t& out) {
  const auto v = query(target, key);
  if (!v) return false;
  try {
    size_t used = 0;
    const long long x = std::stoll(*v, &used);
    if (used != v->size()) return false;
    out = x;
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace tachyon::api
