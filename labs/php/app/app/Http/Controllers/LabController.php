<?php
namespace App\Http\Controllers;

use Illuminate\Http\JsonResponse;
use Illuminate\Support\Facades\DB;

/**
 * The three endpoints of lab-spec §3. Each first spends `app.burn_us` µs of CPU (perflab's
 * `stack.php.burn_us`, an injected regression; 0 = none).
 */
class LabController
{
    public function __construct()
    {
        $us = (int) config('app.burn_us', 0);
        if ($us > 0) {
            self::burn($us);
        }
    }

    /** A busy loop on this worker's CPU time (user + system), not on the wall clock. */
    private static function burn(int $us): void
    {
        $cpu = static function (): int {
            $r = getrusage();
            return $r['ru_utime.tv_sec'] * 1000000 + $r['ru_utime.tv_usec']
                + $r['ru_stime.tv_sec'] * 1000000 + $r['ru_stime.tv_usec'];
        };
        $end = $cpu() + $us;
        $x = 0;
        do {
            for ($i = 0; $i < 200; $i++) {
                $x = ($x * 1103515245 + 12345) % 2147483648;
            }
        } while ($cpu() < $end);
    }

    /** One primary-key lookup on the 10,000-row products table. */
    public function db(): JsonResponse
    {
        $row = DB::selectOne('select id, name, price from products where id = ?', [random_int(1, 10000)]);
        return new JsonResponse($row);
    }

    /** IO wait: 100 ms inside PostgreSQL, holding a php-fpm worker and a connection. */
    public function slow(): JsonResponse
    {
        DB::select('select pg_sleep(0.1)');
        return new JsonResponse(['slept_ms' => 100]);
    }

    /** Framework only, no database. */
    public function ping(): JsonResponse
    {
        return new JsonResponse(['pong' => true, 'laravel' => app()->version()]);
    }
}
