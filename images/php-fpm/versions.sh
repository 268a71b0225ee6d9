#!/bin/sh
dv() { dpkg-query -W -f '${Version}' "$1" 2>/dev/null; }
fpm=$(dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' 'php*-fpm' | awk '$1 == "ii" {print $2}' | grep -E '^php[0-9.]+-fpm$' | head -n1)
printf '{"php":"%s","laravel":"%s","dpkg:%s":"%s","dpkg:php-laravel-framework":"%s","debian":"%s"}\n' \
  "$(php -r 'echo PHP_VERSION;')" \
  "$(cd /srv/app && php -r 'require "bootstrap/autoload.php"; echo Illuminate\Foundation\Application::VERSION;')" \
  "$fpm" "$(dv "$fpm")" "$(dv php-laravel-framework)" "$(cat /etc/debian_version)"
