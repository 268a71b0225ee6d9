#!/bin/sh
# Run time: set the lab role's password (generated per stack, never stored in the repo), then serve.
set -eu
: "${PG_PASSWORD:?PG_PASSWORD must be set by perflab}"
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)
PGDATA=/var/lib/postgresql/lab
echo "ALTER ROLE lab PASSWORD '${PG_PASSWORD}';" | "$PGBIN/postgres" --single -D "$PGDATA" postgres >/dev/null
exec "$PGBIN/postgres" -D "$PGDATA" -c max_connections="${PG_MAX_CONNECTIONS:-100}" "$@"
