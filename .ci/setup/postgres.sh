# PostgreSQL 15 with pgvector on 127.0.0.1:55432 for ragloom-vector-stores-postgres's
# live tests. Sourced by .ci/run (set -euo pipefail, root, CI=true); exports RAGLOOM_TEST_PG_URL.
#
# Debian 12 ships no pgvector binary package, so pgvector is built once from Debian's
# own source package (newer suite) and its three installed files are cached under
# $HOME/.cache/ragloom/; later runs copy them back and skip the build. The server
# runs from a data directory under /tmp with trust authentication, listening on
# 127.0.0.1 only. Everything is idempotent: a server already answering on the port
# is reused.

ragloom_pg_setup() {
  local port="${RAGLOOM_PG_PORT:-55432}"
  local bin=/usr/lib/postgresql/15/bin
  local libdir=/usr/lib/postgresql/15/lib
  local extdir=/usr/share/postgresql/15/extension
  local cache="$HOME/.cache/ragloom/pgvector-pg15"
  local data="${TMPDIR:-/tmp}/ragloom-pgdata-$port"
  local url="postgres://postgres@127.0.0.1:$port/postgres"
  local as_pg=()
  if [ "$(id -u)" = 0 ]; then as_pg=(su postgres -s /bin/sh -c); fi

  run_as_pg() {
    if [ "${#as_pg[@]}" -gt 0 ]; then "${as_pg[@]}" "$*"; else sh -c "$*"; fi
  }

  # 1. The server and client binaries.
  if [ ! -x "$bin/postgres" ] || ! command -v psql >/dev/null; then
    echo "postgres.sh: installing postgresql-15"
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      postgresql-15 postgresql-client-15
  fi

  # 2. pgvector: from the cache, or built from Debian's source package.
  if [ ! -f "$cache/vector.so" ]; then
    echo "postgres.sh: building pgvector (cached afterwards in $cache)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      postgresql-server-dev-15 make gcc libc6-dev
    local apt_dir="$HOME/.cache/ragloom/apt-src"
    local src_dir="$HOME/.cache/ragloom/pgvector-src"
    mkdir -p "$apt_dir/lists/partial" "$src_dir"
    # A deb-src entry for the next suite on the mirror apt already uses, kept
    # out of the system's own source lists.
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
      awk 'BEGIN{RS="";ORS="\n\n"} NR==1' /etc/apt/sources.list.d/debian.sources \
        | sed -e 's/^Types: deb$/Types: deb-src/' -e 's/^Suites: .*/Suites: trixie/' \
        > "$apt_dir/src.sources"
    else
      local mirror
      mirror="$(awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list)"
      printf 'Types: deb-src\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        "${mirror:-http://deb.debian.org/debian}" > "$apt_dir/src.sources"
    fi
    local apt_opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$apt_dir"
      -o "Dir::State::Lists=$apt_dir/lists")
    apt-get "${apt_opts[@]}" update -q
    (cd "$src_dir" && rm -rf pgvector-*/ && apt-get "${apt_opts[@]}" source --download-only pgvector \
      && tar xzf pgvector_*.orig.tar.gz)
    local tree
    tree="$(find "$src_dir" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*' | head -n 1)"
    if [ -z "$tree" ]; then
      echo "postgres.sh: pgvector source did not unpack under $src_dir" >&2
      return 1
    fi
    # OPTFLAGS="" keeps pgvector from compiling with -march=native, so the cached
    # build runs on any x86-64 machine.
    make -C "$tree" -j2 PG_CONFIG="$bin/pg_config" OPTFLAGS="" >/dev/null
    mkdir -p "$cache.tmp"
    cp "$tree/vector.so" "$tree/vector.control" "$cache.tmp/"
    cp "$tree"/sql/vector--*.sql "$cache.tmp/"
    rm -rf "$cache" && mv "$cache.tmp" "$cache"
  fi
  if ! cmp -s "$cache/vector.so" "$libdir/vector.so"; then
    cp "$cache/vector.so" "$libdir/"
    cp "$cache/vector.control" "$cache"/vector--*.sql "$extdir/"
  fi

  # 3. The server, unless one already answers on the port.
  if ! "$bin/pg_isready" -q -h 127.0.0.1 -p "$port"; then
    if [ ! -f "$data/PG_VERSION" ]; then
      rm -rf "$data" && mkdir -p "$data"
      if [ "${#as_pg[@]}" -gt 0 ]; then chown postgres "$data"; fi
      run_as_pg "$bin/initdb -D '$data' -U postgres --auth=trust -E UTF8 --locale=C.UTF-8" >/dev/null
    fi
    # pg_ctl detaches the server, so it outlives this script; -w -t bounds the wait.
    if ! run_as_pg "$bin/pg_ctl -D '$data' -l '$data/log' -w -t 60 \
      -o '-c listen_addresses=127.0.0.1 -p $port -k /tmp' start" >/dev/null; then
      echo "postgres.sh: PostgreSQL did not start on 127.0.0.1:$port within 60 s; log:" >&2
      tail -n 20 "$data/log" >&2 || true
      return 1
    fi
  fi

  PGOPTIONS='-c client_min_messages=warning' psql -X -q -v ON_ERROR_STOP=1 "$url" \
    -c 'CREATE EXTENSION IF NOT EXISTS vector' >/dev/null
  export RAGLOOM_TEST_PG_URL="$url"
  echo "postgres.sh: PostgreSQL 15 + pgvector $(psql -X -tA "$url" \
    -c "SELECT extversion FROM pg_extension WHERE extname = 'vector'") at $url"
}

ragloom_pg_setup
unset -f ragloom_pg_setup run_as_pg
