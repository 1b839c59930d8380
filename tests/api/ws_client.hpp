#pragma once
// A blocking WebSocket client for the api tests (Beast), on 127.0.0.1.
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <string>
#include <vector>

namespace tachyon::testing {

class WsClient {
 public:
  explicit WsClient(int port) : ws_(ioc_) {
    namespace asio = boost::asio;
    asio::ip::tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(port));
    boost::beast::get_lowest_layer(ws_).connect(ep);
    boost::beast::get_lowest_layer(ws_).expires_after(std::chrono::seconds(10));
    ws_.handshake("127.0.0.1", "/stream");
  }
  void send(const std::string& s) { ws_.write(boost::asio::buffer(s)); }
  // The next frame; "" once the connection closed (then `closed` and `close_code` say how) or
  // after 10 s without one.
  std::string recv() {
    boost::beast::flat_buffer b;
    boost::beast::get_lowest_layer(ws_).expires_after(std::chrono::seconds(10));
    boost::beast::error_code ec;
    ws_.read(b, ec);
    if (ec) {
      closed = true;
      close_code = ws_.reason().code;
      return "";
    }
    return boost::beast::buffers_to_string(b.data());
  }
  // The next frame containing `needle` (others are kept in `seen`); "" as recv().
  std::string recv_until(const std::string& needle) {
    for (int i = 0; i < 500; ++i) {
      std::string f = recv();
      if (f.empty() || f.find(needle) != std::string::npos) return f;
      seen.push_back(std::move(f));
    }
    return "";
  }
  void close() { ws_.close(boost::beast::websocket::close_code::normal); }

  std::vector<std::string> seen;
  bool closed = false;
  uint16_t close_code = 0;

 private:
  boost::asio::io_context ioc_;
  boost::beast::websocket::stream<boost::beast::tcp_stream> ws_;
};

}  // namespace tachyon::testing
