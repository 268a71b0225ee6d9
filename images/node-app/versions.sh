#!/bin/sh
dv() { dpkg-query -W -f '${Version}' "$1" 2>/dev/null; }
printf '{"node":"%s","express":"%s","pg":"%s","dpkg:nodejs":"%s","dpkg:node-express":"%s","dpkg:node-pg":"%s","debian":"%s"}\n' \
  "$(node -v)" "$(node -p 'require("express/package.json").version')" \
  "$(node -p 'require("pg/package.json").version')" \
  "$(dv nodejs)" "$(dv node-express)" "$(dv node-pg)" "$(cat /etc/debian_version)"
