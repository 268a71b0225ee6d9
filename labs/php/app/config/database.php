<?php
return [
    'default' => env('DB_CONNECTION', 'pgsql'),
    'connections' => [
        'pgsql' => [
            'driver' => 'pgsql',
            'host' => env('DB_HOST', 'pg'),
            'port' => env('DB_PORT', '5432'),
            'database' => env('DB_DATABASE', 'lab'),
            'username' => env('DB_USERNAME', 'lab'),
            'password' => env('DB_PASSWORD', ''),
            'charset' => 'utf8',
            'prefix' => '',
            'prefix_indexes' => true,
            'search_path' => 'public',
            'sslmode' => 'disable',
            // lab-spec §3: every experiment but exp0 runs with DB_PERSISTENT=true.
            'options' => [PDO::ATTR_PERSISTENT => (bool) env('DB_PERSISTENT', false)],
        ],
    ],
    'migrations' => 'migrations',
];
