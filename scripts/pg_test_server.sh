#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the storage tests (loopback only, trust auth, no fsync).
#
#   scripts/pg_test_server.sh start   # prints the URL, e.g. postgresql://santa@127.0.0.1:54321/postgres
#   scripts/pg_test_server.sh url     # prints the URL of the running cluster
#   scripts/pg_test_server.sh restart # restarts the cluster, cutting every connection (data kept)
#   scripts/pg_test_server.sh halt    # stops the server (fast: every connection cut), keeping its data and port
#   scripts/pg_test_server.sh resume  # starts a halted cluster again, on the same port with the same options
#                                     (`start` on a halted cluster makes a new, empty one)
#   scripts/pg_test_server.sh stop    # stops the cluster and deletes its files
#
# halt + resume is a database outage of any length (a failover, a host reboot): between the two, connecting
# is refused; `url` still prints the cluster's URL, `stop` still deletes it.
#
# Typical use:  SANTA_TEST_POSTGRES_URL=$(scripts/pg_test_server.sh start) pytest tests/storage
# Works as root (initdb refuses root, so the cluster runs as the `postgres` user, or a system
# user it creates) or as an ordinary user. Binaries: $PG_BIN, /usr/local/bin, then
# /usr/lib/postgresql/<newest>/bin (Debian's postgresql-NN package).
set -euo pipefail

DIR="${SANTA_PG_DIR:-${TMPDIR:-/tmp}/santa-pg}"
DATA="$DIR/data"
DB_USER=santa

die() { echo "pg_test_server: $*" >&2; exit 1; }

pg_bin() {
  local d
  for d in "${PG_BIN:-}" /usr/local/bin $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return; fi
  done
  die "no initdb/pg_ctl found (set PG_BIN)"
}

os_user() {
  # The OS account that owns the cluster: the caller, or a non-root account when root.
  if [ "$(id -u)" != 0 ]; then id -un; return; fi
  if id postgres >/dev/null 2>&1; then echo postgres; return; fi
  id santa-pg >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin santa-pg
  echo santa-pg
}

as_owner() {
  local user; user=$(os_user)
  if [ "$(id -u)" = 0 ]; then runuser -u "$user" -- "$@"; else "$@"; fi
}

free_port() {
  if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
    return
  fi
  local p
  for _ in $(seq 50); do  # no python: probe random high ports until one refuses connections
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
  die "no free port found"
}

url() {
  [ -f "$DIR/port" ] || die "not running (no $DIR/port)"
  echo "postgresql://$DB_USER@127.0.0.1:$(cat "$DIR/port")/postgres"
}

running() {
  [ -f "$DATA/PG_VERSION" ] && as_owner "$(pg_bin)/pg_ctl" -D "$DATA" status >/dev/null 2>&1
}

start() {
  if running; then url; return; fi
  local bin port; bin=$(pg_bin); port=$(free_port)
  rm -rf "$DIR"
  mkdir -p "$DIR"
  if [ "$(id -u)" = 0 ]; then chown "$(os_user)" "$DIR"; fi
  as_owner "$bin/initdb" -D "$DATA" -U "$DB_USER" --auth=trust -E UTF8 --no-locale \
    >"$DIR/initdb.log" 2>&1 || { cat "$DIR/initdb.log" >&2; die "initdb failed"; }
  launch "$port"
  echo "$port" >"$DIR/port"
  url
}

launch() {
  # Start the server of the cluster in $DATA on port $1 (start and resume: the same options).
  as_owner "$(pg_bin)/pg_ctl" -D "$DATA" -l "$DIR/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $1 -k $DIR -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
    start >/dev/null || { tail -n 20 "$DIR/server.log" >&2; die "server did not start"; }
}

halt() {
  # Stop the server only: the data and the port file stay, so `resume` brings the same cluster back.
  [ -f "$DATA/PG_VERSION" ] || die "no cluster in $DIR"
  if running; then as_owner "$(pg_bin)/pg_ctl" -D "$DATA" -m fast -w -t 60 stop >/dev/null; fi
}

resume() {
  # Start a halted cluster again where it was (its port, its options); a running one is left alone.
  [ -f "$DATA/PG_VERSION" ] && [ -f "$DIR/port" ] || die "no halted cluster in $DIR"
  running || launch "$(cat "$DIR/port")"
  url
}

stop() {
  if running; then as_owner "$(pg_bin)/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null; fi
  rm -rf "$DIR"
}

restart() {
  # A fast restart of the running cluster (every connection cut, the data kept): a database restart mid-run.
  running || die "no cluster running in $DIR"
  as_owner "$(pg_bin)/pg_ctl" -D "$DATA" -l "$DIR/server.log" -m fast -w -t 60 restart >/dev/null </dev/null
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  restart) restart ;;
  halt) halt ;;
  resume) resume ;;
  url) url ;;
  *) die "usage: $0 start|stop|restart|halt|resume|url" ;;
esac
