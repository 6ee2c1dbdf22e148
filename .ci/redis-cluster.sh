#!/usr/bin/env bash
# Starts a three-master Redis Cluster on 127.0.0.1:7000-7002 from Debian's redis-server; idempotent.
# Used by .ci/run (and by hand) for the Redis Cluster suites (OAUTH_TEST_REDIS_CLUSTER_NODES).
# REDIS_CLUSTER_PASSWORD makes every node require it (requirepass, masterauth); REDIS_CLUSTER_TLS=1 makes every
# node speak only TLS, with a private CA made in the directory ($DIR/ca.crt). .ci/run starts one cluster of each
# so, on other ports and in other directories, for the password-protected and the rediss+cluster:// suites.
set -euo pipefail
PORTS="${REDIS_CLUSTER_PORTS:-7000 7001 7002}"
DIR="${REDIS_CLUSTER_DIR:-/tmp/express-oauth-router-redis-cluster}"
PASSWORD="${REDIS_CLUSTER_PASSWORD:-}"
TLS="${REDIS_CLUSTER_TLS:-}"
mkdir -p "$DIR"

server_args=()
cli_args=()
if [ -n "$PASSWORD" ]; then server_args+=(--requirepass "$PASSWORD" --masterauth "$PASSWORD"); fi
if [ -n "$TLS" ]; then
  # A CA and one certificate for 127.0.0.1, made once (two days outlast any CI run).
  if [ ! -f "$DIR/node.crt" ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$DIR/ca.key" -out "$DIR/ca.crt" -days 2 -subj "/CN=test CA" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout "$DIR/node.key" -out "$DIR/node.csr" -subj "/CN=127.0.0.1" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' > "$DIR/ext.cnf"
    openssl x509 -req -in "$DIR/node.csr" -CA "$DIR/ca.crt" -CAkey "$DIR/ca.key" -CAcreateserial -out "$DIR/node.crt" \
      -days 2 -extfile "$DIR/ext.cnf" 2>/dev/null
  fi
  cli_args=(--tls --cacert "$DIR/ca.crt")
  server_args+=(--tls-cluster yes --tls-replication yes --tls-auth-clients no --tls-cert-file "$DIR/node.crt"
    --tls-key-file "$DIR/node.key" --tls-ca-cert-file "$DIR/ca.crt")
fi

# redis-cli, over TLS and authenticated as the cluster needs (REDISCLI_AUTH keeps a password off the command line).
cli() { if [ -n "$PASSWORD" ]; then REDISCLI_AUTH="$PASSWORD" redis-cli "${cli_args[@]}" "$@"; else redis-cli "${cli_args[@]}" "$@"; fi; }
# With TLS the node listens on its port for TLS only (--port 0 --tls-port PORT).
listen_args() { if [ -n "$TLS" ]; then echo "--port 0 --tls-port $1"; else echo "--port $1"; fi; }

# Every node answers and the first sees the cluster whole (a node just stopped is not marked failed for a while).
state_ok() {
  for port in $PORTS; do cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1 || return 1; done
  cli -h 127.0.0.1 -p "${PORTS%% *}" cluster info 2>/dev/null | grep -q '^cluster_state:ok'
}
if state_ok; then exit 0; fi

nodes=""
# A node's cluster bus listens on its port + 10000, inside the ephemeral range: an outgoing connection (another
# cluster's bus, a test) can hold that port for a moment and the node aborts at start ("Address already in use",
# seen once on 37200). Such a node is started again, up to three times.
for port in $PORTS; do
  for _ in 1 2 3; do
    cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1 && break
    # shellcheck disable=SC2046 # two or four words
    redis-server "${server_args[@]}" $(listen_args "$port") --bind 127.0.0.1 --cluster-enabled yes \
      --cluster-config-file "$DIR/nodes-$port.conf" --dir "$DIR" \
      --save "" --appendonly no --daemonize yes --logfile "$DIR/redis-$port.log"
    for _ in $(seq 1 10); do cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1 && break; sleep 1; done
  done
  nodes="$nodes 127.0.0.1:$port"
done

# Nodes restarted from their nodes-*.conf re-form the cluster by themselves: give them a moment first.
first_known=$(cli -h 127.0.0.1 -p "${PORTS%% *}" cluster info | sed -n 's/^cluster_known_nodes:\([0-9]*\).*/\1/p')
if [ "${first_known:-1}" != "1" ]; then
  for _ in $(seq 1 10); do state_ok && exit 0; sleep 1; done
fi
# A node that already knows other nodes (a half-made cluster) is reset first, so `create` starts clean.
for port in $PORTS; do
  known=$(cli -h 127.0.0.1 -p "$port" cluster info | sed -n 's/^cluster_known_nodes:\([0-9]*\).*/\1/p')
  if [ "${known:-1}" != "1" ] || [ "$(cli -h 127.0.0.1 -p "$port" dbsize)" != "0" ]; then
    cli -h 127.0.0.1 -p "$port" flushall >/dev/null
    cli -h 127.0.0.1 -p "$port" cluster reset hard >/dev/null
  fi
done
# shellcheck disable=SC2086 # one word per node
cli --cluster create $nodes --cluster-replicas 0 --cluster-yes >/dev/null
for _ in $(seq 1 30); do state_ok && exit 0; sleep 1; done
echo "redis-cluster.sh: cluster on ports $PORTS did not reach cluster_state:ok" >&2
exit 1
