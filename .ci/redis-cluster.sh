#!/usr/bin/env bash
# Starts a three-master Redis Cluster on 127.0.0.1:7000-7002 from Debian's redis-server; idempotent.
# Used by .ci/run (and by hand) for the Redis Cluster suites (OAUTH_TEST_REDIS_CLUSTER_NODES).
# REDIS_CLUSTER_PASSWORD makes every node require it (requirepass, masterauth): .ci/run starts a second cluster
# so, on other ports and in another directory, for the password-protected cluster suite.
set -euo pipefail
PORTS="${REDIS_CLUSTER_PORTS:-7000 7001 7002}"
DIR="${REDIS_CLUSTER_DIR:-/tmp/express-oauth-router-redis-cluster}"
PASSWORD="${REDIS_CLUSTER_PASSWORD:-}"
mkdir -p "$DIR"

# redis-cli, authenticated when the cluster has a password (REDISCLI_AUTH keeps it off the command line).
cli() { if [ -n "$PASSWORD" ]; then REDISCLI_AUTH="$PASSWORD" redis-cli "$@"; else redis-cli "$@"; fi; }
auth_args=()
if [ -n "$PASSWORD" ]; then auth_args=(--requirepass "$PASSWORD" --masterauth "$PASSWORD"); fi

state_ok() { cli -h 127.0.0.1 -p "${PORTS%% *}" cluster info 2>/dev/null | grep -q '^cluster_state:ok'; }
if state_ok; then exit 0; fi

nodes=""
for port in $PORTS; do
  if ! cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1; then
    redis-server "${auth_args[@]}" --bind 127.0.0.1 --port "$port" --cluster-enabled yes \
      --cluster-config-file "$DIR/nodes-$port.conf" --dir "$DIR" \
      --save "" --appendonly no --daemonize yes --logfile "$DIR/redis-$port.log"
  fi
  for _ in $(seq 1 30); do cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1 && break; sleep 1; done
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
