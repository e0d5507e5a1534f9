# Sourced by scripts and tests: makes a throw-away certificate authority and
# a certificate for localhost / 127.0.0.1 signed by it (P-256, 2 days).
#
#   make_test_certificates DIR
#   -> DIR/ca.pem (trust this), DIR/server.pem + DIR/server.key (serve with these)
make_test_certificates() {
  local dir=$1
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj "/CN=Blur test CA" -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=localhost" \
    -keyout "$dir/server.key" -out "$dir/server.csr" 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$dir/san.ext"
  openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
    -CAcreateserial -days 2 -extfile "$dir/san.ext" -out "$dir/server.pem" 2>/dev/null
}

# A device certificate for mutual TLS: P-256, 2 days, signed by a fleet CA
# (made on first use, separate from the server's CA) and binding the device
# nonce as its one subjectAltName URI, urn:blur:device:NONCE_HEX
# (collector/src/server/client_identity.h).
#
#   make_device_certificate DIR NONCE_HEX NAME
#   -> DIR/fleet-ca.pem + DIR/fleet-ca.key (serve with --tls-client-ca fleet-ca.pem),
#      DIR/NAME.pem + DIR/NAME.key (the device's certificate and key)
make_device_certificate() {
  local dir=$1 nonce=$2 name=$3
  if [[ ! $nonce =~ ^[0-9a-f]{16}$ ]]; then
    echo "make_device_certificate: a device nonce is 16 lower-case hex digits, not '$nonce'" >&2
    return 1
  fi
  if [ ! -f "$dir/fleet-ca.pem" ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
      -subj "/CN=Blur test fleet CA" -keyout "$dir/fleet-ca.key" -out "$dir/fleet-ca.pem" \
      2>/dev/null
  fi
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=Blur device $nonce" \
    -keyout "$dir/$name.key" -out "$dir/$name.csr" 2>/dev/null
  printf 'subjectAltName=URI:urn:blur:device:%s\nextendedKeyUsage=clientAuth\n' "$nonce" \
    > "$dir/$name.ext"
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/fleet-ca.pem" -CAkey "$dir/fleet-ca.key" \
    -CAcreateserial -days 2 -extfile "$dir/$name.ext" -out "$dir/$name.pem" 2>/dev/null
}

# A CRL of the fleet CA (made by make_device_certificate) revoking the
# device certificates NAME... (none: an empty CRL), written to DIR/fleet.crl
# atomically, a new file renamed over it (serve with --tls-client-crl).
#
#   make_fleet_crl DIR [NAME...]
make_fleet_crl() {
  local dir=$1
  shift
  local ca="$dir/fleet-crl-ca"
  rm -rf "$ca"
  mkdir -p "$ca"
  : > "$ca/index.txt"
  echo 01 > "$ca/crlnumber"
  printf '[ca]\ndefault_ca = fleet\n[fleet]\ndatabase = %s\ncrlnumber = %s\ndefault_md = sha256\ndefault_crl_days = 2\n' \
    "$ca/index.txt" "$ca/crlnumber" > "$ca/openssl.cnf"
  local name
  for name in "$@"; do
    openssl ca -config "$ca/openssl.cnf" -keyfile "$dir/fleet-ca.key" -cert "$dir/fleet-ca.pem" \
      -revoke "$dir/$name.pem" 2>/dev/null
  done
  openssl ca -config "$ca/openssl.cnf" -keyfile "$dir/fleet-ca.key" -cert "$dir/fleet-ca.pem" \
    -gencrl -out "$dir/fleet.crl.new" 2>/dev/null
  mv "$dir/fleet.crl.new" "$dir/fleet.crl"
}
