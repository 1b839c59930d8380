#pragma once
// A thread's reusable simdjson parser and padded copy, one per call site: parsing a message
// allocates nothing once the buffers have grown to fit it. Each call site keeps its own
// (`static thread_local JsonScratch`), so a document one site is still reading is never
// overwritten by another site's parse; a site is never re-entered while its document lives.
#include <string>
#include <string_view>

#include <simdjson.h>

namespace tachyon::api {

struct JsonScratch {
  static constexpr size_t kKeepBytes = 256 * 1024;
  simdjson::ondemand::parser parser;
  std::string buf;

  // `text`, copied with simdjson's padding after it, parsed. The document reads `buf`: valid
  // until the next iterate() on this scratch.
  simdjson::simdjson_result<simdjson::ondemand::document> iterate(std::string_view text) {
    if (buf.capacity() > kKeepBytes && text.size() <= kKeepBytes) {  // a large one is not kept
      std::string().swap(buf);
      parser = simdjson::ondemand::parser{};
    }
    buf.assign(text);
    buf.append(simdjson::SIMDJSON_PADDING, ' ');
    return parser.iterate(simdjson::padded_string_view(buf.data(), text.size(), buf.size()));
  }
};

}  // namespace tachyon::api
