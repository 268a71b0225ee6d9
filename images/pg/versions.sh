#!/bin/sh
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)
pkg=$(dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' 'postgresql-[0-9]*' | awk '$1 == "ii" {print $2}' | grep -E '^postgresql-[0-9]+$' | head -n1)
printf '{"postgres":"%s","dpkg:%s":"%s","debian":"%s"}\n' \
  "$("$PGBIN/postgres" --version | sed 's/^postgres (PostgreSQL) //')" "$pkg" \
  "$(dpkg-query -W -f '${Version}' "$pkg")" "$(cat /etc/debian_version)"
