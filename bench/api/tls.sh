#!/usr/bin/env bash
# TLS against plain HTTP on one server, in one run (docs/PERFORMANCE.md "TLS"). The Release
# server on loopback with TLS on its public listener (a P-256 certificate made here by openssl)
# and the plain listener beside it; bench/api/tls_bench.mjs (node) then measures, alternating
# the two in blocks:
#   - connections: CONNECTS requests (GET /health/live), each on a new connection (TCP, or TCP
#     + TLS handshake), sequential: time per request and the server's CPU per connection;
#   - acks: ROUNDS rounds of PER_ROUND signed sendTx (IOC buys that rest nowhere), one at a time
#     on one kept-alive connection per protocol: ack latency percentiles.
#
#   bench/api/tls.sh [--out DIR] [--no-build]
#
# Environment (default): CONNECTS (400), ROUNDS (6), PER_ROUND (200), DURABILITY (fsync),
# BUILD (build/release: built here with the release preset unless --no-build).
set -euo pipefail
cd "$(dirname "$0")/../.."
out="" build=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    *) echo "tls.sh: unknown option $1 (see the header of this script)" >&2; exit 2 ;;
  esac
done
CONNECTS=${CONNECTS:-400} ROUNDS=${ROUNDS:-6} PER_ROUND=${PER_ROUND:-200}
DURABILITY=${DURABILITY:-fsync} BUILD=${BUILD:-build/release}
out="${out:-tls-bench-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
if [[ $build == 1 ]]; then
  [[ $BUILD == build/release ]] && cmake --preset release >/dev/null
  cmake --build "$BUILD" --target tachyon tachyon-cli
fi
bin="$BUILD/src/app"

# The certificate: a CA and a server certificate for 127.0.0.1, both P-256.
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
(
  cd "$out"
  printf 'subjectAltName=IP:127.0.0.1\n' > san
  openssl req -x509 $ec -keyout ca.key -out ca.pem -days 2 -subj /CN=tachyon-bench-ca
  openssl req $ec -keyout server.key -out server.csr -subj /CN=127.0.0.1
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
    -extfile san -out server.pem
) >"$out/openssl.log" 2>&1

cfg="$out/tachyon.toml"
cp configs/tachyon.toml "$cfg"
edit() {
  grep -q "^$1" "$cfg" || { echo "tls.sh: '$1' not in the config" >&2; exit 2; }
  sed -i "s|^$1.*|$1 $2|" "$cfg"
}
edit 'listen_address =' '"127.0.0.1"'
edit 'port =' '0'
edit 'admin_port =' '0'
edit 'plain_port =' '0'
edit 'cert_file =' "\"$out/server.pem\""
edit 'key_file =' "\"$out/server.key\""
edit 'ip_rate_per_s =' '10000000'
edit 'ip_burst =' '10000000'
edit 'account_rate_per_s =' '10000000'
edit 'account_burst =' '10000000'
edit 'data_dir =' "\"$out/data\""
edit 'durability =' "\"$DURABILITY\""
edit 'trace_dir =' "\"$out/traces\""

"$bin/tachyon" --config "$cfg" >"$out/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 300); do grep -q '] ready: ' "$out/server.log" && break; sleep 0.1; done
grep -q '] ready: ' "$out/server.log" || { echo "tls.sh: the server did not start" >&2; cat "$out/server.log" >&2; exit 1; }
port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$out/server.log")
plain=$(sed -n 's/.*plain on 127.0.0.1:\([0-9]*\).*/\1/p' "$out/server.log")
admin=$(sed -n 's/.*admin on 127.0.0.1:\([0-9]*\).*/\1/p' "$out/server.log")

# The trader: account 3, 1M USDC, its key at index 254.
pk=$("$bin/tachyon-cli" keygen --out "$out/trader.key")
nonce=$(curl -s "127.0.0.1:$admin/admin/nextNonce" | sed 's/.*"nonce":\([0-9]*\).*/\1/')
info=$("$bin/tachyon-cli" sign --quiet --key-file "$out/data/operator.key" --tx-type 1 --tx \
  "{\"ToAccountIndex\":3,\"Amount\":1000000000000,\"PubKey\":\"$pk\",\"KeyIndex\":254,\"Nonce\":$nonce}")
curl -s -X POST "127.0.0.1:$admin/api/v1/sendTx" -F tx_type=1 -F "tx_info=$info" >/dev/null

NODE_EXTRA_CA_CERTS="$out/ca.pem" node bench/api/tls_bench.mjs --tls "https://127.0.0.1:$port" \
  --plain "http://127.0.0.1:$plain" --pid "$server" --key "$(cat "$out/trader.key")" --account 3 \
  --connects "$CONNECTS" --rounds "$ROUNDS" --per-round "$PER_ROUND" | tee "$out/report.md"
