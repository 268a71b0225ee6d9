<?php
use App\Http\Controllers\LabController;
use Illuminate\Support\Facades\Route;

Route::get('/db', [LabController::class, 'db']);
Route::get('/slow', [LabController::class, 'slow']);
Route::get('/ping', [LabController::class, 'ping']);
