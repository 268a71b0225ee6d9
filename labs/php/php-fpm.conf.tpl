; php-fpm configuration rendered by perflab per experiment (lab-spec §3; article 0.6 and 5.1).
[global]
error_log = /proc/self/fd/2
log_level = notice
daemonize = no
pid = /run/php/php-fpm.pid     ; the master's pid, for a timed action's signal (load.actions: a reload is USR2 to it)

[www]
user = www-data
group = www-data
listen = __LISTEN__            ; tcp: 9000 (nginx -> php-fpm:9000) | unix: /run/php/php-fpm.sock
listen.owner = www-data
listen.group = www-data
listen.mode = 0666
listen.backlog = __BACKLOG__   ; 511
pm = __PM__
pm.max_children = __MAX_CHILDREN__
__PM_SPARE__
pm.max_requests = 0
request_terminate_timeout = 30s
; status page served by a hidden extra pool, so it still answers when all workers are busy
pm.status_path = /fpm-status
pm.status_listen = /run/php/status.sock
clear_env = no
catch_workers_output = yes
decorate_workers_output = no
__ACCESS_LOG__
