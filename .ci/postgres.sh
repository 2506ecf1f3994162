#!/usr/bin/env bash
# Best effort: start a throwaway PostgreSQL (Debian's server, if installed) for tests/io/test_sql.py
# and print the URL the test reads from MICROAGG_TEST_POSTGRES_URL; print nothing otherwise
# (the PostgreSQL test then skips). Never fails the CI run.
set -u
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] && [ -x "$bin/initdb" ] || exit 0
[ "$(id -u)" = 0 ] && id postgres >/dev/null 2>&1 || exit 0
data=$(mktemp -d /tmp/microagg-pg.XXXXXX) || exit 0
chown postgres "$data" || exit 0
port=55432
su postgres -c "'$bin/initdb' -D '$data' -A trust -U postgres" >/dev/null 2>&1 || exit 0
su postgres -c "'$bin/pg_ctl' -D '$data' -o '-p $port -k /tmp' -l '$data/log' -w start" \
  >/dev/null 2>&1 || exit 0
echo "postgresql+psycopg://postgres@localhost:$port/postgres"
