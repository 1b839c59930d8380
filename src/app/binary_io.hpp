#pragma once
// Fixed-layout values in and out of the app's own small files (txindex.bin, history.bin): raw
// little-endian bytes, read back with bounds checks.
#include <cstring>
#include <string>
#include <string_view>

namespace tachyon::app {

template <typename T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}
// False when `in` holds fewer than sizeof(T) bytes (nothing is consumed then).
template <typename T>
bool get(std::string_view& in, T& v) {
  if (in.size() < sizeof(T)) return false;
  std::memcpy(&v, in.data(), sizeof(T));
  in.remove_prefix(sizeof(T));
  return true;
}

}  // namespace tachyon::app
