#!/bin/sh
# Run time: cache Laravel's config with this stack's environment (DB password, DB_PERSISTENT),
# then run php-fpm in the foreground with the pool rendered by perflab (/etc/perflab/php-fpm.conf).
set -eu
cd /srv/app
su www-data -s /bin/sh -c 'php artisan config:cache' >/dev/null
exec php-fpm --nodaemonize --fpm-config /etc/perflab/php-fpm.conf "$@"
