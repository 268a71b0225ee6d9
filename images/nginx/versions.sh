#!/bin/sh
printf '{"nginx":"%s","dpkg:nginx":"%s","debian":"%s"}\n' \
  "$(nginx -v 2>&1 | sed 's|^nginx version: nginx/||')" \
  "$(dpkg-query -W -f '${Version}' nginx)" "$(cat /etc/debian_version)"
