#!/bin/sh
# Build time: drop Debian's default cluster, create ours with scram-sha-256, seed, freeze, stop.
set -eu
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)
for c in $(pg_lsclusters -h 2>/dev/null | awk '{print $1 "/" $2}'); do pg_dropcluster --stop "${c%/*}" "${c#*/}"; done
PGDATA=/var/lib/postgresql/lab
mkdir -p "$PGDATA" /run/postgresql && chown postgres:postgres "$PGDATA" /run/postgresql
su postgres -s /bin/sh -c "$PGBIN/initdb -D $PGDATA -U postgres --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null"
cat >> "$PGDATA/postgresql.conf" <<CONF
listen_addresses = '*'
password_encryption = 'scram-sha-256'
max_connections = 100
shared_preload_libraries = ''
log_min_messages = warning
log_connections = off
unix_socket_directories = '/run/postgresql'
CONF
echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D $PGDATA -w -l /tmp/pg-build.log start"
su postgres -s /bin/sh -c "psql -v ON_ERROR_STOP=1 -q -f /opt/perflab/seed.sql"
su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D $PGDATA -w -m fast stop"
rm -f /tmp/pg-build.log
