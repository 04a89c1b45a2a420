#!/usr/bin/env bash
# A streaming read replica of the local PostgreSQL, as a second cluster on this
# machine (Debian's postgresql-common tools), for DATABASE_READ_URL.
#
#   deploy/pg-replica.sh create   make it (or say it is already there) and print its URL
#   deploy/pg-replica.sh remove   stop and delete it, and undo the primary's replication entry
#   deploy/pg-replica.sh status   print its URL when it runs as a replica; exit 1 otherwise
#
# Settings (environment): PRIMARY_HOST (127.0.0.1), PRIMARY_PORT (5432), REPLICA_PORT (5433),
# REPLICA_CLUSTER (replica), PG_VERSION (the newest under /etc/postgresql), REPLICATION_USER
# (postgres). Run as root. The primary must already allow the connection without a password
# from 127.0.0.1 (a trust line in pg_hba.conf); this adds a line for replication connections
# of REPLICATION_USER, marked so that `remove` takes it out again. On another machine, see
# docs/operations.md for the same steps with a password.
set -euo pipefail

PRIMARY_HOST=${PRIMARY_HOST:-127.0.0.1}
PRIMARY_PORT=${PRIMARY_PORT:-5432}
REPLICA_PORT=${REPLICA_PORT:-5433}
REPLICA_CLUSTER=${REPLICA_CLUSTER:-replica}
REPLICATION_USER=${REPLICATION_USER:-postgres}
PG_VERSION=${PG_VERSION:-$(ls /etc/postgresql | sort -V | tail -n 1)}
MARK="# asset-tracker read replica ($REPLICA_CLUSTER)"
LOCK=/tmp/asset-tracker-pg-replica.lock

primary() { psql -h "$PRIMARY_HOST" -p "$PRIMARY_PORT" -U "$REPLICATION_USER" -d postgres -XAtqc "$1"; }
replica() { psql -h 127.0.0.1 -p "$REPLICA_PORT" -U "$REPLICATION_USER" -d postgres -XAtqc "$1" 2>/dev/null; }
url() { echo "postgres://$REPLICATION_USER@127.0.0.1:$REPLICA_PORT"; }
exists() { pg_lsclusters -h | awk -v v="$PG_VERSION" -v c="$REPLICA_CLUSTER" '$1 == v && $2 == c { found = 1 } END { exit !found }'; }

# A standby that streams from the primary (one cut off from it, or past the WAL the primary keeps, does not).
running() { [ "$(replica 'SELECT pg_is_in_recovery() AND EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = '"'"'streaming'"'"')')" = "t" ]; }
SLOT="asset_tracker_${REPLICA_CLUSTER//[^a-z0-9_]/_}"
drop_slot() { primary "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '$SLOT' AND NOT active" >/dev/null; }

allow_replication() {
  local hba
  hba=$(primary 'SHOW hba_file')
  if ! grep -qF "$MARK" "$hba"; then
    printf '%s\nhost replication %s 127.0.0.1/32 trust\n' "$MARK" "$REPLICATION_USER" >>"$hba"
    primary 'SELECT pg_reload_conf()' >/dev/null
  fi
}

disallow_replication() {
  local hba
  hba=$(primary 'SHOW hba_file' 2>/dev/null) || return 0
  if grep -qF "$MARK" "$hba"; then
    # The marker line and the one after it.
    awk -v m="$MARK" '$0 == m { skip = 2 } skip > 0 { skip--; next } { print }' "$hba" >"$hba.tmp"
    cat "$hba.tmp" >"$hba" && rm -f "$hba.tmp"
    primary 'SELECT pg_reload_conf()' >/dev/null
  fi
}

create() {
  if running; then url; return 0; fi
  local level senders
  level=$(primary 'SHOW wal_level')
  senders=$(primary 'SHOW max_wal_senders')
  if [ "$level" = minimal ] || [ "$senders" = 0 ]; then
    echo "the primary cannot stream WAL (wal_level=$level, max_wal_senders=$senders): set wal_level=replica and max_wal_senders>0, then restart it" >&2
    exit 1
  fi
  allow_replication
  if exists; then pg_dropcluster --stop "$PG_VERSION" "$REPLICA_CLUSTER"; fi
  pg_createcluster "$PG_VERSION" "$REPLICA_CLUSTER" --port "$REPLICA_PORT" >/dev/null
  local data="/var/lib/postgresql/$PG_VERSION/$REPLICA_CLUSTER"
  find "$data" -mindepth 1 -delete
  # -R writes standby.signal and primary_conninfo; -X stream copies the WAL the backup needs; the slot (-C -S)
  # keeps the primary's WAL until the replica has it, so a replica stopped for a while catches up
  # (remove drops it: a slot without its replica would keep WAL forever).
  drop_slot
  runuser -u postgres -- pg_basebackup -h "$PRIMARY_HOST" -p "$PRIMARY_PORT" -U "$REPLICATION_USER" -D "$data" -R -X stream -c fast \
    -C -S "$SLOT"
  # The replica is a copy of the primary: the same clients may connect the same way.
  cp "$(primary 'SHOW hba_file')" "/etc/postgresql/$PG_VERSION/$REPLICA_CLUSTER/pg_hba.conf"
  # Queries on the replica then hold back the primary's cleanup instead of being cancelled by it.
  printf 'hot_standby = on\nhot_standby_feedback = on\n' >"/etc/postgresql/$PG_VERSION/$REPLICA_CLUSTER/conf.d/replica.conf"
  # (Without the lock: the server would hold it for as long as it runs.)
  pg_ctlcluster --skip-systemctl-redirect "$PG_VERSION" "$REPLICA_CLUSTER" start 9>&-
  for _ in $(seq 1 240); do running && break; sleep 0.5; done
  if ! running; then echo "the replica did not start; see /var/log/postgresql/postgresql-$PG_VERSION-$REPLICA_CLUSTER.log" >&2; exit 1; fi
  url
}

remove() {
  if exists; then pg_dropcluster --stop "$PG_VERSION" "$REPLICA_CLUSTER"; fi
  drop_slot
  disallow_replication
}

# Two callers (CI, a test, the bench) at once take turns.
exec 9>"$LOCK"
flock 9
case "${1:-}" in
  create) create ;;
  remove) remove ;;
  status) running && url ;;
  *) echo "usage: $0 create|remove|status" >&2; exit 2 ;;
esac
