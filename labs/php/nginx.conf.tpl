# nginx configuration rendered by perflab per experiment (lab-spec §3; article 0.6 and 5.1).
user www-data;
worker_processes __WORKERS__;
worker_rlimit_nofile __NOFILE__;
pid /run/nginx.pid;
error_log /dev/stderr warn;

events {
    worker_connections 8192;
}

http {
    log_format timed '$time_iso8601 $status $request_time $upstream_connect_time "$request"';
    access_log __ACCESS_LOG__;
    keepalive_timeout 65;
    keepalive_requests 100000;
    server_tokens off;
__LIMIT_ZONE__

    server {
        listen 80 default_server;

        # status page of the hidden php-fpm pool: only perflab's sampler, whose requests come
        # from the host through the lab network's gateway (not k6, not the other containers,
        # not a load generator on another host)
        location = /fpm-status {
            allow __SAMPLER__; deny all;
            include fastcgi_params;
            fastcgi_param SCRIPT_NAME /fpm-status;
            fastcgi_param SCRIPT_FILENAME /fpm-status;
            fastcgi_pass unix:/run/php/status.sock;
        }

        # nginx's own counters (stub_status), for the same sampler only; its reads are not
        # the load's, so they stay out of the access log
        location = /nginx-status {
            allow __SAMPLER__; deny all;
            stub_status;
            access_log off;
        }

        location / {
            include fastcgi_params;
            fastcgi_param SCRIPT_FILENAME /srv/app/public/index.php;
            fastcgi_param SCRIPT_NAME /index.php;
            fastcgi_pass __FCGI__;   # tcp: php-fpm:9000 | unix: unix:/run/php/php-fpm.sock
            fastcgi_connect_timeout __FCGI_TIMEOUT__s;   # backlog full: SYN dropped, retried, then 504
            fastcgi_read_timeout __FCGI_TIMEOUT__s;     # longer waiting for PHP (queue + work) => nginx 504
__LIMIT_REQ__
        }
    }
}
