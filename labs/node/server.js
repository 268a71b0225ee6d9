'use strict';
// The Node lab app of lab-spec §4 (article app/server.js): Express + pg on Debian's packages.
// Endpoints: /cpu (pbkdf2Sync, blocks the loop ~5.5 ms), /db (aggregate over one customer's
// orders), /dbsleep (pg_sleep(0.02): holds a pool connection, ~no CPU). Every 2 s each process
// prints one JSON metrics line on stdout. PROCESSES > 1 runs node:cluster (SCHED_RR), each
// worker with its own pool. BURN_US > 0 spends that much CPU time in every request (an injected
// regression for `perflab compare`); WAIT_US > 0 waits that long before every answer without
// spending CPU (a timer: an injected latency regression at unchanged CPU). CPU_MODE picks how
// /cpu runs its pbkdf2 (perflab `stack.node.cpu_mode`): `sync` on the event loop (the
// article's 2a), `async` on libuv's thread pool (UV_THREADPOOL_SIZE threads, read by libuv
// itself), `workers` on a pool of WORKER_THREADS worker_threads fed from one queue.
const cluster = require('node:cluster');
const crypto = require('node:crypto');
const { monitorEventLoopDelay, performance } = require('node:perf_hooks');

const PORT = Number(process.env.PORT || 3000);
const PROCESSES = Number(process.env.PROCESSES || 1);
const POOL_MAX = Number(process.env.POOL_MAX || 10);
const PG_CONN_TIMEOUT_MS = Number(process.env.PG_CONN_TIMEOUT_MS || 3000);
// Injected regression (perflab `stack.node.burn_us`): CPU µs spent in every request's handler.
const BURN_US = Number(process.env.BURN_US || 0);
// Injected latency (perflab `stack.node.wait_us`): µs every answer waits on a timer, the event
// loop free meanwhile. Node's timers count whole milliseconds: perflab accepts multiples of 1000.
const WAIT_MS = Number(process.env.WAIT_US || 0) / 1000;
const CPU_MODE = process.env.CPU_MODE || 'sync';
const WORKER_THREADS = Number(process.env.WORKER_THREADS || 4);
const LOG_EVERY_MS = 2000;
// The /cpu work (~5.5 ms of CPU on the article's host): pbkdf2's arguments.
const PBKDF2 = ['password', 'salt', 24000, 32, 'sha256'];

if (PROCESSES > 1 && cluster.isPrimary) {
  cluster.schedulingPolicy = cluster.SCHED_RR;
  for (let i = 0; i < PROCESSES; i++) cluster.fork();
  cluster.on('exit', (w, code, signal) => {
    console.error(JSON.stringify({ t: new Date().toISOString(), event: 'worker_exit', pid: w.process.pid, code, signal }));
    process.exit(1);
  });
} else {
  worker().catch((err) => {
    console.error(JSON.stringify({ t: new Date().toISOString(), event: 'boot_failed', error: String(err && err.message || err) }));
    process.exit(1);
  });
}

// The /cpu handler of CPU_MODE: pbkdf2 on the loop, on libuv's pool, or on a worker pool.
function cpuHandler(answer, fail) {
  const done = (res) => (err, key) => (err ? fail(res, err) : answer(res, { key: key.toString('hex') }));
  if (CPU_MODE === 'async') return (req, res) => crypto.pbkdf2(...PBKDF2, done(res));
  if (CPU_MODE === 'workers') {
    const run = workerPool(WORKER_THREADS);
    return (req, res) => run(done(res));
  }
  return (req, res) => done(res)(null, crypto.pbkdf2Sync(...PBKDF2));
}

// n worker_threads, each running pbkdf2Sync for one job at a time; jobs wait in one FIFO queue
// for the next idle worker. A worker that dies ends the process (as a dead cluster worker does).
function workerPool(n) {
  const { Worker } = require('node:worker_threads');
  const src = `const { parentPort } = require('node:worker_threads');
const crypto = require('node:crypto');
parentPort.on('message', (id) => {
  const key = crypto.pbkdf2Sync(...${JSON.stringify(PBKDF2)});
  parentPort.postMessage({ id, key });
});`;
  const idle = [];
  const queue = [];
  const pending = new Map();
  let next = 0;
  const give = (w) => {
    const id = queue.shift();
    if (id === undefined) idle.push(w);
    else w.postMessage(id);
  };
  for (let i = 0; i < n; i++) {
    const w = new Worker(src, { eval: true });
    w.on('message', ({ id, key }) => {
      const cb = pending.get(id);
      pending.delete(id);
      give(w);
      cb(null, Buffer.from(key));
    });
    w.on('error', (err) => {
      console.error(JSON.stringify({ t: new Date().toISOString(), event: 'worker_thread_error', error: String(err && err.message || err) }));
      process.exit(1);
    });
    idle.push(w);
  }
  return (cb) => {
    const id = next++;
    pending.set(id, cb);
    const w = idle.pop();
    if (w) w.postMessage(id);
    else queue.push(id);
  };
}

async function worker() {
  const express = require('express');
  const { Pool } = require('pg');
  // Connection parameters come from PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE.
  const pool = new Pool({ max: POOL_MAX, idleTimeoutMillis: 0, connectionTimeoutMillis: PG_CONN_TIMEOUT_MS });
  pool.on('error', (err) => countError(err));

  // pg does not honour a `min`: open all POOL_MAX connections now, then give them back.
  const clients = await Promise.all(Array.from({ length: POOL_MAX }, () => pool.connect()));
  clients.forEach((c) => c.release());

  // The histogram records the full gap between 10 ms timer ticks, so an idle loop reads
  // ~10 ms. We subtract the resolution: eld_* = extra delay beyond the tick.
  const ELD_RES_MS = 10;
  const eld = monitorEventLoopDelay({ resolution: ELD_RES_MS });
  eld.enable();
  let eluPrev = performance.eventLoopUtilization();
  let cpuPrev = process.cpuUsage();
  let win = newWindow();
  let inflight = 0;

  function newWindow() {
    return { served: 0, err5xx: 0, poolWaitingMax: 0, inflightMax: 0, errors: {} };
  }
  function countError(err) {
    const msg = String((err && err.message) || err);
    win.errors[msg] = (win.errors[msg] || 0) + 1;
  }
  function notePoolWaiting() {
    if (pool.waitingCount > win.poolWaitingMax) win.poolWaitingMax = pool.waitingCount;
  }
  const ms = (ns) => Math.max(0, Math.round((ns / 1e6 - ELD_RES_MS) * 100) / 100);

  function snapshot() {
    const elu = performance.eventLoopUtilization(eluPrev);
    eluPrev = performance.eventLoopUtilization();
    const cpu = process.cpuUsage(cpuPrev);
    cpuPrev = process.cpuUsage();
    const cpuMs = (cpu.user + cpu.system) / 1000;
    notePoolWaiting();
    const s = {
      t: new Date().toISOString(),
      pid: process.pid,
      rps: Math.round(win.served / (LOG_EVERY_MS / 1000)),
      err5xx: win.err5xx,
      eld_p50_ms: ms(eld.percentile(50)),
      eld_p99_ms: ms(eld.percentile(99)),
      eld_max_ms: ms(eld.max),
      elu: Math.round(elu.utilization * 100) / 100,
      cpu_cores: Math.round((cpuMs / LOG_EVERY_MS) * 100) / 100, // 1.00 = one full core
      cpu_ms_per_req: win.served ? Math.round((cpuMs / win.served) * 100) / 100 : null,
      pool_total: pool.totalCount,
      pool_idle: pool.idleCount,
      pool_waiting: pool.waitingCount,
      pool_waiting_max: win.poolWaitingMax,
      inflight,
      inflight_max: win.inflightMax,
      rss_mb: Math.round(process.memoryUsage.rss() / 1048576),
      errors: win.errors,
    };
    eld.reset();
    win = newWindow();
    win.inflightMax = inflight;
    process.stdout.write(JSON.stringify(s) + '\n');
  }

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use((req, res, next) => {
    inflight++;
    if (inflight > win.inflightMax) win.inflightMax = inflight;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      inflight--;
      win.served++;
      if (res.statusCode >= 500) win.err5xx++;
    };
    res.once('finish', finish);
    res.once('close', finish);
    next();
  });

  // A busy loop on this process's CPU time (user + system), not on the wall clock: a preempted
  // loop still burns BURN_US of CPU.
  function burn(us) {
    const start = process.cpuUsage();
    let x = 0;
    for (;;) {
      for (let i = 0; i < 200; i++) x = (x * 1103515245 + 12345) % 2147483648;
      const d = process.cpuUsage(start);
      if (d.user + d.system >= us) return x;
    }
  }
  if (BURN_US > 0) {
    app.use((req, res, next) => {
      burn(BURN_US);
      next();
    });
  }

  // Every answer of the endpoints, after WAIT_MS on a timer when a wait is injected.
  const answer = (res, body) => {
    if (WAIT_MS > 0) setTimeout(() => res.json(body), WAIT_MS);
    else res.json(body);
  };

  const fail = (res, err) => {
    countError(err);
    res.status(500).json({ error: String((err && err.message) || err) });
  };

  app.get('/cpu', cpuHandler(answer, fail));

  app.get('/db', async (req, res) => {
    const customer = 1 + Math.floor(Math.random() * 1000);
    try {
      const q = pool.query(
        'SELECT count(*) AS n, sum(amount) AS total, max(created_at) AS last FROM orders WHERE customer_id = $1',
        [customer],
      );
      notePoolWaiting();
      const r = await q;
      answer(res, { customer, ...r.rows[0] });
    } catch (err) {
      fail(res, err);
    }
  });

  app.get('/dbsleep', async (req, res) => {
    try {
      const q = pool.query('SELECT pg_sleep(0.02)');
      notePoolWaiting();
      await q;
      answer(res, { slept_ms: 20 });
    } catch (err) {
      fail(res, err);
    }
  });

  app.listen(PORT, () => {
    snapshot(); // first line at once: readiness waits for it
    setInterval(snapshot, LOG_EVERY_MS).unref();
  });
}
