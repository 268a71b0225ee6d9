#!/bin/sh
printf '{"pgbouncer":"%s","dpkg:pgbouncer":"%s","debian":"%s"}\n' \
  "$(pgbouncer --version | head -n1 | sed 's/^PgBouncer //;s/^pgbouncer //')" \
  "$(dpkg-query -W -f '${Version}' pgbouncer)" "$(cat /etc/debian_version)"
