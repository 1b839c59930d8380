// TLS on the public listener, end to end against the real server: certificates made at test time
// by the openssl tool (a CA and two server certificates for 127.0.0.1); a Python client over
// HTTPS and WSS (tests/api/tls_client.py: verification, plain HTTP refused clearly, the plain
// loopback listener, a SIGHUP reload that keeps open connections); then ccxt trading over
// HTTPS and WSS with the CA passed to node (tests/api/ccxt/trading.mjs).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "api/api_support.hpp"

namespace tachyon::testing {
namespace {

// ca.pem / ca.key, then srv1 and srv2 (.pem, .key): P-256 keys, IP SAN 127.0.0.1, 2 days.
bool make_certificates(const std::string& dir) {
  const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  std::string script = "set -e; cd " + dir + "; printf 'subjectAltName=IP:127.0.0.1\\n' > san;" +
                       "openssl req -x509 " + ec +
                       " -keyout ca.key -out ca.pem -days 2 -subj /CN=tachyon-test-ca;";
  for (const char* n : {"srv1", "srv2"}) {
    const std::string s = n;
    script += "openssl req " + ec + " -keyout " + s + ".key -out " + s +
              ".csr -subj /CN=127.0.0.1; openssl x509 -req -in " + s +
              ".csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile san -out " + s +
              ".pem;";
  }
  std::string out;
  return run_program("bash -c \"" + script + "\" 2>&1", out, /*quiet=*/true) == 0;
}

TEST(Tls, https_and_wss_verified_plain_refused_reloaded_on_sighup_and_ccxt_trades) {
  const std::string src = TACHYON_SOURCE_DIR;
  TempDir certs;
  ASSERT_TRUE(make_certificates(certs.path()));
  // The server reads these two files; the client overwrites them with srv2's before SIGHUP.
  std::filesystem::copy_file(certs.path() + "/srv1.pem", certs.path() + "/server.pem");
  std::filesystem::copy_file(certs.path() + "/srv1.key", certs.path() + "/server.key");
  ConfigFile cfg({{"cert_file = \"\"", "cert_file = \"" + certs.path() + "/server.pem\""},
                  {"key_file = \"\"", "key_file = \"" + certs.path() + "/server.key\""},
                  {"plain_port = 8082", "plain_port = 0"}});
  Server s(cfg.args());
  ASSERT_TRUE(s.ready()) << s.log();
  ASSERT_GT(s.plain_port(), 0) << s.log();
  Trader a{3}, b{4}, c{5};
  constexpr Usdc kDeposit = 100'000'000'000;
  ASSERT_EQ(s.deposit(a.account, kDeposit, a.pk, 254).status, 200);
  ASSERT_EQ(s.deposit(b.account, kDeposit, b.pk, 254).status, 200);
  ASSERT_EQ(s.deposit(c.account, kDeposit, c.pk).status, 200);

  const std::string d = certs.path();
  std::string out;
  const std::string py = "/usr/bin/python3 " + src + "/tests/api/tls_client.py --port " +
                         std::to_string(s.port()) + " --plain-port " +
                         std::to_string(s.plain_port()) + " --pid " + std::to_string(s.pid()) +
                         " --cert " + d + "/server.pem --key " + d + "/server.key --ca " + d +
                         "/ca.pem --next-cert " + d + "/srv2.pem --next-key " + d + "/srv2.key";
  EXPECT_EQ(run_program(py + " 2>&1", out), 0) << out;
  EXPECT_EQ(out.find("FAIL"), std::string::npos) << out;
  EXPECT_NE(out.find("\ndone"), std::string::npos) << out;

  // ccxt over HTTPS and WSS: the same trading run as over plain HTTP, node trusting the test CA.
  const std::string dir = src + "/build/ccxt";
  ASSERT_TRUE(std::filesystem::exists(dir + "/node_modules/ccxt/package.json"))
      << "ccxt is not installed: run scripts/setup.sh (npm ci in build/ccxt)";
  std::filesystem::copy_file(src + "/tests/api/ccxt/trading.mjs", dir + "/trading.mjs",
                             std::filesystem::copy_options::overwrite_existing);
  const std::string conf = ccxt_trading_conf("https", s.port(), a, b);
  std::ofstream(d + "/trading.json") << conf;
  std::string node_out;
  const int rc = run_program("cd " + dir + " && NODE_EXTRA_CA_CERTS=" + d +
                                 "/ca.pem node trading.mjs " + d + "/trading.json 2>&1",
                             node_out);
  EXPECT_EQ(rc, 0) << node_out;
  EXPECT_EQ(node_out.find("FAIL"), std::string::npos) << node_out;
  EXPECT_NE(node_out.find("\ndone"), std::string::npos) << node_out;
  EXPECT_EQ(s.stop(), 0) << s.log();
  EXPECT_NE(s.log().find("SIGHUP: TLS certificate"), std::string::npos) << s.log();
}

}  // namespace
}  // namespace tachyon::testing
