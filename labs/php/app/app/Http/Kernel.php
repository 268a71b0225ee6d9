<?php
namespace App\Http;

use Illuminate\Foundation\Http\Kernel as HttpKernel;

class Kernel extends HttpKernel
{
    /** No global middleware: the lab measures the framework's request path, not sessions or CSRF. */
    protected $middleware = [];

    protected $middlewareGroups = [
        'api' => [],
    ];
}
