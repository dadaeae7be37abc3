#!/bin/sh
# Starts Weft for Complement, as its image contract asks: the server name from $SERVER_NAME, plain HTTP
# client traffic on 8008, HTTPS federation on 8448 with a certificate signed by Complement's CA (made at
# every start: the container may be restarted and must come back on its own data in /data), the
# registration shared secret "complement", the application services Complement mounts, and limits raised.
set -eu
: "${SERVER_NAME:?SERVER_NAME is not set}"
cd /data

if [ ! -f tls.key ]; then openssl genrsa -out tls.key 2048 2>/dev/null; fi
openssl req -new -sha256 -key tls.key -subj "/CN=$SERVER_NAME" -out tls.csr
printf 'subjectAltName=DNS:%s\n' "$SERVER_NAME" > tls.ext
openssl x509 -req -in tls.csr -CA /complement/ca/ca.crt -CAkey /complement/ca/ca.key -CAcreateserial \
  -out tls.crt -days 1 -sha256 -extfile tls.ext 2>/dev/null

appservices=""
for f in /complement/appservice/*.yaml; do
  [ -f "$f" ] && appservices="$appservices\"$f\", "
done

cat > homeserver.yaml <<YAML
server_name: "$SERVER_NAME"
public_baseurl: "http://127.0.0.1:8008/"
listeners:
  # Both serve everything, as Synapse's Complement image does (its tests reach federation paths on 8008).
  - port: 8008
    type: http
    bind_addresses: ["0.0.0.0"]
    resources: [{names: [client, federation]}]
  - port: 8448
    type: http
    tls: true
    bind_addresses: ["0.0.0.0"]
    resources: [{names: [client, federation]}]
tls_certificate_path: /data/tls.crt
tls_private_key_path: /data/tls.key
database: {name: sqlite3, args: {database: /data/homeserver.db}}
signing_key_path: /data/signing.key
media_store_path: /data/media_store
log_level: ${WEFT_LOG_LEVEL:-info}
registration_shared_secret: complement
enable_registration: true
password_config: {scrypt_log_n: 4}
app_service_config_files: [${appservices%, }]
# Complement's servers live on the Docker network (private addresses) and on the host.
ip_range_blacklist: []
trusted_key_servers: []
suppress_key_server_warning: true
allow_public_rooms_over_federation: true
# As Synapse's Complement config: device names over federation (TestFederationKeyUploadQuery), and the
# server notices user and room (TestServerNotices).
allow_device_name_lookup_over_federation: true
server_notices:
  system_mxid_localpart: _server
  system_mxid_display_name: "Server Alert"
  room_name: "Server Alert"
# Several media tests read new uploads from the unauthenticated /_matrix/media/v3 endpoints.
enable_authenticated_media: false
url_preview_enabled: true
url_preview_ip_range_blacklist: []
rc_message: {per_second: 9999, burst_count: 9999}
rc_registration: {per_second: 9999, burst_count: 9999}
rc_login:
  address: {per_second: 9999, burst_count: 9999}
  account: {per_second: 9999, burst_count: 9999}
  failed_attempts: {per_second: 9999, burst_count: 9999}
rc_media_create: {per_second: 9999, burst_count: 9999}
rc_3pid_validation: {per_second: 9999, burst_count: 9999}
rc_delayed_event_mgmt: {per_second: 9999, burst_count: 9999}
# The unstable features Synapse's Complement configuration turns on, with its option names.
max_event_delay_duration: 24h
experimental_features:
  msc3391_enabled: true
  msc3890_enabled: true
  msc3874_enabled: true
  msc3381_polls_enabled: true
  msc4155_enabled: true
  msc4306_enabled: true
  msc4354_enabled: true
  msc4222_enabled: true
YAML

exec node --max-semi-space-size=4 --v8-pool-size=1 --heap-growing-percent=30 /weft/bin/weft.js start --config /data/homeserver.yaml
