<?php
// One skeleton for Laravel 10 (trixie) and Laravel 11+ (forky: 13): both still accept the
// classic Http/Console kernels and exception handler bound here.
$app = new Illuminate\Foundation\Application(
    $_ENV['APP_BASE_PATH'] ?? dirname(__DIR__)
);

// Laravel 11+ merges the framework's default config files, which Debian's package installs at
// /usr/share/php/Illuminate/config while the loader looks four levels above Bootstrap/: the
// app's own config/ is complete, so skip the merge.
if (method_exists($app, 'dontMergeFrameworkConfiguration')) {
    $app->dontMergeFrameworkConfiguration();
}

$app->singleton(Illuminate\Contracts\Http\Kernel::class, App\Http\Kernel::class);
$app->singleton(Illuminate\Contracts\Console\Kernel::class, App\Console\Kernel::class);
$app->singleton(Illuminate\Contracts\Debug\ExceptionHandler::class, App\Exceptions\Handler::class);

return $app;
