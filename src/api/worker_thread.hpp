#pragma once
// An api worker's thread (server.cpp's only): its io_context, its WorkerLogic, the eventfd that
// wakes it for results and publishes, its 250 ms tick, and, when the pipeline runs on the api
// workers (Front::hosted), the loop that runs the pipeline's rounds between its handlers.
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "tachyon/api/worker.hpp"
#include "tachyon/pipe/front.hpp"

namespace tachyon::api {

struct Worker {
  using error_code = boost::beast::error_code;
  Worker(ApiShared& shared, pipe::Front& pipe, uint32_t i)
      : logic(shared, pipe, i), efd(ioc), tick(ioc), index(i) {
    const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    efd.assign(fd);
  }
  void arm() {
    efd.async_wait(boost::asio::posix::descriptor_base::wait_read, [this](error_code ec) {
      if (ec) return;
      uint64_t v = 0;
      (void)::read(efd.native_handle(), &v, sizeof(v));
      armed.store(true, std::memory_order_seq_cst);
      logic.on_wake();
      arm();
    });
  }
  void ring() {
    if (hosting) {  // rung by the pipeline's loop on this very thread: the loop drains it
      self_wake.store(true, std::memory_order_relaxed);
      return;
    }
    if (armed.exchange(false, std::memory_order_seq_cst)) {
      const uint64_t one = 1;
      (void)::write(efd.native_handle(), &one, sizeof(one));
    }
  }
  void schedule_tick() {
    tick.expires_after(std::chrono::milliseconds(250));
    tick.async_wait([this](error_code ec) {
      if (ec) return;
      logic.on_wake();  // a safety net: a lost wake-up costs at most one tick
      logic.on_tick();
      schedule_tick();
    });
  }

  // This thread's loop when it hosts the pipeline (Front::hosted): the pipeline's rounds run
  // between this worker's handlers; it sleeps in the io_context, which the pipeline's bell wakes.
  void host(pipe::Front& pipe) {
    boost::asio::posix::stream_descriptor bell(ioc, ::dup(pipe.host_bell_fd()));
    uint64_t rung = 0;
    std::function<void()> watch = [&] {  // a read, not a wait: asio tries it before polling
      bell.async_read_some(boost::asio::buffer(&rung, sizeof(rung)), [&](error_code ec, size_t) {
        if (!ec) watch();
      });
    };
    watch();
    while (!ioc.stopped()) {
      size_t work = ioc.poll();
      work += logic.run_deferred();  // the users' txs of that pass (verify helpers)
      work += pipe.host_step();
      if (const long us = pipe.host_linger_us(); us > 0)
        std::this_thread::sleep_for(std::chrono::microseconds(us));
      if (self_wake.exchange(false, std::memory_order_relaxed)) {
        logic.on_wake();
        ++work;
      }
      if (work > 0) continue;
      long timeout_us = 0;
      if (pipe.host_may_sleep(timeout_us)) ioc.run_one_for(std::chrono::microseconds(timeout_us));
      pipe.host_woke();
    }
    logic.run_deferred();
    pipe.host_leave();
  }

  boost::asio::io_context ioc{1};
  WorkerLogic logic;
  boost::asio::posix::stream_descriptor efd;
  boost::asio::steady_timer tick;
  std::atomic<bool> armed{true};
  bool hosting = false;                // set before the thread starts
  std::atomic<bool> self_wake{false};  // hosting: the loop rang this worker (relaxed: same thread)
  std::thread thread;
  uint32_t index;
};

}  // namespace tachyon::api
