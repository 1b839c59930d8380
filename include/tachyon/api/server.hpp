#pragma once
// The api server: Boost.Beast on Asio, N worker threads with one io_context each. HTTP/1.1
// keep-alive and WebSocket (/stream) share the public port, over TLS when ApiConfig names a
// certificate (then a plain listener may serve the same API on loopback); the admin listener
// (loopback) takes operator txs, /metrics and the snapshot trigger. Accepted sockets are spread
// over the workers; the apply thread wakes a worker through an eventfd its io_context waits on.
#include <memory>

#include "tachyon/api/worker.hpp"
#include "tachyon/core/status.hpp"

namespace tachyon::api {

class ApiServer {
 public:
  ApiServer(ApiShared& shared, pipe::Front& pipe);
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Loads the certificate (with TLS on), binds the listeners (port 0 picks a free port) and
  // starts the workers. Call after the pipeline's set_notify() is free to be taken: start()
  // installs its own.
  Status start();
  // Any thread: loads the certificate and key files again; new connections use them, open ones
  // keep theirs. On an error the previous ones stay in use.
  Status reload_tls();
  bool tls() const;
  int plain_port() const;  // -1: no plain listener
  // Stops accepting; keeps the workers running (they still deliver replies).
  void stop_accepting();
  // Delivers what the pipeline routed last, then stops the workers and closes every connection.
  void stop();
  int port() const;
  int admin_port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tachyon::api
