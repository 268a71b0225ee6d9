'use strict';
// The demo lab's capacity server (seed 002): WORKERS slots; each request to /work holds one slot
// for SERVICE_MS (a timer, ~no CPU) and waits in a FIFO queue when every slot is busy. Capacity
// = WORKERS / SERVICE_MS = 16 / 0.040 s = 400 requests/s. Every 2 s one JSON metrics line.
const http = require('node:http');

const PORT = Number(process.env.PORT || 3000);
const WORKERS = Number(process.env.WORKERS || 16);
const SERVICE_MS = Number(process.env.SERVICE_MS || 40);
const LOG_EVERY_MS = 2000;

let busy = 0;
const queue = [];
let win = { served: 0, inflightMax: 0, queueMax: 0, queueWaitMsSum: 0 };
let cpuPrev = process.cpuUsage();

function inflight() {
  return busy + queue.length;
}

function release() {
  busy--;
  const next = queue.shift();
  if (next) next();
}

function serve(req, res, arrived) {
  busy++;
  win.queueWaitMsSum += Date.now() - arrived;
  setTimeout(() => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
    win.served++;
    release();
  }, SERVICE_MS);
}

const server = http.createServer((req, res) => {
  if (req.url !== '/work' && !req.url.startsWith('/work?')) {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":"not found"}');
    return;
  }
  const arrived = Date.now();
  if (busy < WORKERS) serve(req, res, arrived);
  else queue.push(() => serve(req, res, arrived));
  if (inflight() > win.inflightMax) win.inflightMax = inflight();
  if (queue.length > win.queueMax) win.queueMax = queue.length;
});
server.keepAliveTimeout = 65000;

function snapshot() {
  const cpu = process.cpuUsage(cpuPrev);
  cpuPrev = process.cpuUsage();
  const s = {
    t: new Date().toISOString(),
    pid: process.pid,
    rps: Math.round(win.served / (LOG_EVERY_MS / 1000)),
    workers: WORKERS,
    service_ms: SERVICE_MS,
    busy,
    inflight: inflight(),
    inflight_max: win.inflightMax,
    queue: queue.length,
    queue_max: win.queueMax,
    queue_wait_ms_avg: win.served ? Math.round((win.queueWaitMsSum / win.served) * 100) / 100 : null,
    cpu_cores: Math.round(((cpu.user + cpu.system) / 1000 / LOG_EVERY_MS) * 100) / 100,
    rss_mb: Math.round(process.memoryUsage.rss() / 1048576),
  };
  win = { served: 0, inflightMax: inflight(), queueMax: queue.length, queueWaitMsSum: 0 };
  process.stdout.write(JSON.stringify(s) + '\n');
}

server.listen(PORT, () => {
  snapshot();
  setInterval(snapshot, LOG_EVERY_MS).unref();
});
