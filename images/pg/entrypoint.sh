#!/bin/sh
# Run time: set the passwords of the app role `lab` and the harness role `perflab` (generated
# per stack, never stored in the repo), then serve.
set -eu
: "${PG_PASSWORD:?PG_PASSWORD must be set by perflab}"
: "${PG_MONITOR_PASSWORD:?PG_MONITOR_PASSWORD must be set by perflab}"
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)
PGDATA=/var/lib/postgresql/lab
printf "ALTER ROLE lab PASSWORD '%s';\nALTER ROLE perflab PASSWORD '%s';\n" "$PG_PASSWORD" "$PG_MONITOR_PASSWORD" \
  | "$PGBIN/postgres" --single -D "$PGDATA" postgres >/dev/null
exec "$PGBIN/postgres" -D "$PGDATA" -c max_connections="${PG_MAX_CONNECTIONS:-100}" "$@"
