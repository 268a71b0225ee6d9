<?php
// Debian's packaged Laravel (php-laravel-framework) instead of composer's vendor/autoload.php:
// the framework and its dependencies register their own autoloaders under /usr/share/php.
require_once '/usr/share/php/Illuminate/autoload.php';

spl_autoload_register(function (string $class): void {
    if (str_starts_with($class, 'App\\')) {
        $file = __DIR__ . '/../app/' . str_replace('\\', '/', substr($class, 4)) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});
