#include "tachyon/obs/trace.hpp"

#include <pthread.h>

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace tachyon::obs {

FlightRecorder::FlightRecorder(RecorderConfig cfg) : cfg_(std::move(cfg)) {
  names_.emplace_back("?");
}

FlightRecorder::~FlightRecorder() { stop_dumper(); }

Track& FlightRecorder::track(std::string thread_name) {
  size_t cap = 1;
  while (cap < cfg_.events_per_track) cap <<= 1;
  std::lock_guard g(mu_);
  return *tracks_.emplace_back(std::make_unique<Track>(this, std::move(thread_name), cap));
}

uint16_t FlightRecorder::name_id(std::string_view name) {
  std::lock_guard g(mu_);
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return static_cast<uint16_t>(i);
  }
  if (names_.size() >= UINT16_MAX) return 0;
  names_.emplace_back(name);
  return static_cast<uint16_t>(names_.size() - 1);
}

namespace {

void json_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  out += '"';
}

void append_u64(std::string& out, uint64_t v) {
  char buf[24];
  out.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

// ns as µs with three decimals ("12.345"): integers only, no printf of a double (a dump formats
// a few hundred thousand of these).
void append_us(std::string& out, int64_t ns) {
  if (ns < 0) {
    out += '-';
    ns = -ns;
  }
  append_u64(out, static_cast<uint64_t>(ns) / 1000);
  const auto frac = static_cast<unsigned>(static_cast<uint64_t>(ns) % 1000);
  const char dec[4] = {'.', char('0' + frac / 100), char('0' + frac / 10 % 10),
                       char('0' + frac % 10)};
  out.append(dec, 4);
}

}  // namespace

std::string FlightRecorder::chrome_json(int64_t now_ns) const {
  std::lock_guard g(mu_);
  const int64_t from = now_ns - cfg_.window_ns;
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  bool first = true;
  auto sep = [&] {
    if (!first) out += ",\n";
    first = false;
  };
  std::vector<std::string> quoted(names_.size());  // each name as a JSON string, once
  for (size_t i = 0; i < names_.size(); ++i) json_string(quoted[i], names_[i]);
  std::vector<TraceEvent> evs;
  for (size_t t = 0; t < tracks_.size(); ++t) {
    const Track& tr = *tracks_[t];
    std::string tid = ",\"pid\":1,\"tid\":";
    append_u64(tid, t + 1);
    sep();
    out += "{\"ph\":\"M\",\"name\":\"thread_name\"";
    out += tid;
    out += ",\"args\":{\"name\":";
    json_string(out, tr.name());
    out += "}}";
    // Newest first until the window ends or the writer overwrote what we would read next.
    evs.clear();
    const uint64_t head = tr.log().head();
    for (uint64_t p = head; p > 0; --p) {
      TraceEvent e;
      if (!tr.log().read(p - 1, e) || e.ts_ns < from) break;
      evs.push_back(e);
    }
    std::reverse(evs.begin(), evs.end());
    for (const TraceEvent& e : evs) {
      sep();
      out += "{\"name\":";
      out += quoted[e.name < quoted.size() ? e.name : 0];
      out += e.kind == 'X'   ? ",\"ph\":\"X\""
             : e.kind == 'C' ? ",\"ph\":\"C\""
                             : ",\"ph\":\"i\",\"s\":\"t\"";
      out += tid;
      out += ",\"ts\":";
      append_us(out, e.ts_ns);
      if (e.kind == 'X') {
        out += ",\"dur\":";
        append_us(out, e.dur_ns);
      }
      out += ",\"args\":{\"v\":";
      append_u64(out, e.arg);
      out += "}}";
    }
  }
  out += "]}\n";
  return out;
}

void FlightRecorder::start_dumper() {
  if (cfg_.dir.empty() || dumper_.joinable()) return;
  std::error_code ec;
  std::filesystem::create_directories(cfg_.dir, ec);
  dumper_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "trace-dumper");
    dumper_loop();
  });
}

void FlightRecorder::stop_dumper() {
  {
    std::lock_guard g(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (dumper_.joinable()) dumper_.join();
}

std::vector<std::string> FlightRecorder::dumps() const {
  std::lock_guard g(mu_);
  return files_;
}

bool FlightRecorder::wait_dumps(uint64_t n, std::chrono::milliseconds timeout) {
  std::unique_lock lk(stop_mu_);
  return dumped_cv_.wait_for(lk, timeout, [&] { return dumps_written() >= n; });
}

void FlightRecorder::dumper_loop() {
  std::unique_lock lk(stop_mu_);
  while (!stopping_) {
    // Requests are flags set by hot threads (they never wait on us): look every 50 ms.
    stop_cv_.wait_for(lk, std::chrono::milliseconds(50));
    if (!dump_requested_.exchange(false, std::memory_order_acquire)) continue;
    const int64_t now = realtime_ns();
    if (last_dump_ns_ != 0 && now - last_dump_ns_ < cfg_.min_interval_ns) {
      dumps_suppressed_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    last_dump_ns_ = now;
    std::string reason;
    {
      std::lock_guard g(mu_);
      const uint16_t r = reason_.load(std::memory_order_relaxed);
      reason = r < names_.size() ? names_[r] : "?";
    }
    for (char& c : reason) {
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    char file[128];
    std::snprintf(file, sizeof file, "/trace-%" PRId64 "-%s-%" PRIu64 "us.json", now / 1'000'000,
                  reason.c_str(), reason_value_.load(std::memory_order_relaxed) / 1000);
    const std::string path = cfg_.dir + file;
    const std::string json = chrome_json(now);
    {  // written under a temporary name, then renamed: a reader never sees half a file
      std::ofstream f(path + ".tmp", std::ios::binary | std::ios::trunc);
      f << json;
      f.close();
      if (!f) continue;
    }
    dumps_written_.fetch_add(1, std::memory_order_relaxed);
    std::error_code ec;
    std::filesystem::rename(path + ".tmp", path, ec);
    {
      std::lock_guard g(mu_);
      files_.push_back(path);
      while (files_.size() > cfg_.keep_files) {
        std::error_code ec;
        std::filesystem::remove(files_.front(), ec);
        files_.erase(files_.begin());
      }
    }
    dumped_cv_.notify_all();
  }
}

}  // namespace tachyon::obs
