<?php
use Illuminate\Support\ServiceProvider;

return [
    'name' => env('APP_NAME', 'perflab'),
    'env' => env('APP_ENV', 'production'),
    'debug' => (bool) env('APP_DEBUG', false),
    'url' => env('APP_URL', 'http://localhost'),
    'timezone' => 'UTC',
    'locale' => 'en',
    'fallback_locale' => 'en',
    'key' => env('APP_KEY'),
    'cipher' => 'AES-256-CBC',
    'maintenance' => ['driver' => 'file'],
    // Injected regression (perflab `stack.php.burn_us`): CPU µs spent in every request.
    'burn_us' => (int) env('BURN_US', 0),
    // Laravel >= 10 lists its own providers; Laravel 8 (bookworm) needs them spelled out.
    'providers' => array_merge(
        method_exists(ServiceProvider::class, 'defaultProviders')
            ? ServiceProvider::defaultProviders()->toArray()
            : [
                Illuminate\Auth\AuthServiceProvider::class,
                Illuminate\Broadcasting\BroadcastServiceProvider::class,
                Illuminate\Bus\BusServiceProvider::class,
                Illuminate\Cache\CacheServiceProvider::class,
                Illuminate\Foundation\Providers\ConsoleSupportServiceProvider::class,
                Illuminate\Cookie\CookieServiceProvider::class,
                Illuminate\Database\DatabaseServiceProvider::class,
                Illuminate\Encryption\EncryptionServiceProvider::class,
                Illuminate\Filesystem\FilesystemServiceProvider::class,
                Illuminate\Foundation\Providers\FoundationServiceProvider::class,
                Illuminate\Hashing\HashServiceProvider::class,
                Illuminate\Mail\MailServiceProvider::class,
                Illuminate\Notifications\NotificationServiceProvider::class,
                Illuminate\Pagination\PaginationServiceProvider::class,
                Illuminate\Pipeline\PipelineServiceProvider::class,
                Illuminate\Queue\QueueServiceProvider::class,
                Illuminate\Redis\RedisServiceProvider::class,
                Illuminate\Auth\Passwords\PasswordResetServiceProvider::class,
                Illuminate\Session\SessionServiceProvider::class,
                Illuminate\Translation\TranslationServiceProvider::class,
                Illuminate\Validation\ValidationServiceProvider::class,
                Illuminate\View\ViewServiceProvider::class,
            ],
        [App\Providers\RouteServiceProvider::class]
    ),
    'aliases' => [],
];
