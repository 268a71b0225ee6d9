<?php
namespace App\Http\Controllers;

use Illuminate\Http\JsonResponse;
use Illuminate\Support\Facades\DB;

/** The three endpoints of lab-spec §3. */
class LabController
{
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
