'use strict';
// The storefront lab's front (issue 44, seed 004): Express pages rendered from the backend API.
// Pages: /home, /landing (hot keys, plus the footer every page shows), /gacha, /raffle,
// /catalog (?id=N: one item each, a cold key per item). Each bug of the seed is a setting:
//   CACHE_TTL_MS     per-process cache of the API's answers (seed: landing 5 s)
//   SINGLE_FLIGHT    1: concurrent misses of a key share one backend call; 0: each misses alone
//   CACHE_FAILURES   1: a failed call is cached as null for FAILURE_TTL_MS (the page is then a
//                    404, the seed's sticky "not found"); 0: the failure is thrown, not cached
//   KEEP_ALIVE, MAX_SOCKETS  the outbound agent (0 sockets = Infinity, the seed's global agent)
//   SYNC_LOG         1: every backend answer written to stdout synchronously (the debug line)
//   BACKEND_TIMEOUT_MS  the front's timeout to the backend, agent queue included (seed: 15 s)
//   MAX_INFLIGHT     load shedding at the door: 429 past this many pages in flight (0 = none)
// GET /status: the front's counters and, when it answers within 300 ms, the backend's.
// POST /admin/flush: empties the cache (the cache-flush trigger).
const express = require('express');
const http = require('node:http');
const fs = require('node:fs');

const env = (k, d) => (process.env[k] === undefined ? d : Number(process.env[k]));
const PORT = env('PORT', 3000);
const API_HOST = process.env.API_HOST || 'api';
const API_PORT = env('API_PORT', 3001);
const CACHE_TTL_MS = env('CACHE_TTL_MS', 5000);
const SINGLE_FLIGHT = env('SINGLE_FLIGHT', 0) === 1;
const CACHE_FAILURES = env('CACHE_FAILURES', 0) === 1;
const FAILURE_TTL_MS = env('FAILURE_TTL_MS', 60000);
const KEEP_ALIVE = env('KEEP_ALIVE', 1) === 1;
const MAX_SOCKETS = env('MAX_SOCKETS', 64);
const SYNC_LOG = env('SYNC_LOG', 0) === 1;
const BACKEND_TIMEOUT_MS = env('BACKEND_TIMEOUT_MS', 15000);
const MAX_INFLIGHT = env('MAX_INFLIGHT', 0);

const agent = new http.Agent({
  keepAlive: KEEP_ALIVE,
  maxSockets: MAX_SOCKETS > 0 ? MAX_SOCKETS : Infinity,
  maxFreeSockets: 16,
  scheduling: 'lifo',
});
// The status page's own agent: its reads never wait behind the pages' calls.
const statusAgent = new http.Agent({ keepAlive: false });

const c = {
  pages: 0, inflight: 0, s200: 0, s404: 0, s429: 0, s502: 0, s504: 0,
  backend_calls: 0, backend_ok: 0, backend_errors: 0, backend_timeouts: 0,
  cache_hits: 0, cache_misses: 0, stampede_fills: 0, joined: 0,
  failures_cached: 0, failure_hits: 0, open_sockets: 0, open_sockets_max: 0, queued_max: 0,
};
const cache = new Map(); // key -> { value (null: a cached failure), expires }
const inFlight = new Map(); // key -> Promise (single-flight) or a count of calls (without)
const seen = new WeakSet();

function queued() {
  let n = 0;
  for (const q of Object.values(agent.requests)) n += q.length;
  return n;
}

// One GET of the backend through the agent, failed after BACKEND_TIMEOUT_MS however long it
// waited in the agent's queue.
function call(path) {
  c.backend_calls++;
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (err, v) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) reject(err); else resolve(v);
    };
    const req = http.get({ host: API_HOST, port: API_PORT, path, agent }, (res) => {
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        if (SYNC_LOG) fs.writeSync(1, `api ${path} ${res.statusCode} ${body}\n`);
        if (res.statusCode !== 200) return finish(Object.assign(new Error(`api ${res.statusCode}`), { kind: 'error' }));
        try { finish(null, JSON.parse(body)); } catch (e) { finish(Object.assign(e, { kind: 'error' })); }
      });
      res.on('error', (e) => finish(Object.assign(e, { kind: 'error' })));
    });
    req.on('socket', (s) => {
      if (seen.has(s)) return;
      seen.add(s);
      c.open_sockets++;
      if (c.open_sockets > c.open_sockets_max) c.open_sockets_max = c.open_sockets;
      s.once('close', () => { c.open_sockets--; });
    });
    req.on('error', (e) => finish(Object.assign(e, { kind: 'error' })));
    const timer = setTimeout(() => {
      finish(Object.assign(new Error('backend timeout'), { kind: 'timeout' }));
      req.destroy();
    }, BACKEND_TIMEOUT_MS);
    const q = queued();
    if (q > c.queued_max) c.queued_max = q;
  });
}

// A fill of `key`: the backend's answer, cached on success; a failure is cached as null when
// CACHE_FAILURES (the seed's bug), else thrown.
async function fill(key, path) {
  try {
    const v = await call(path);
    c.backend_ok++;
    cache.set(key, { value: v, expires: Date.now() + CACHE_TTL_MS });
    return v;
  } catch (err) {
    if (err.kind === 'timeout') c.backend_timeouts++; else c.backend_errors++;
    if (!CACHE_FAILURES) throw err;
    c.failures_cached++;
    cache.set(key, { value: null, expires: Date.now() + FAILURE_TTL_MS, err: err.kind });
    return null;
  }
}

function get(key, path) {
  const hit = cache.get(key);
  if (hit && hit.expires > Date.now()) {
    c.cache_hits++;
    if (hit.value === null) c.failure_hits++;
    return Promise.resolve(hit.value);
  }
  c.cache_misses++;
  const pending = inFlight.get(key);
  if (SINGLE_FLIGHT) {
    if (pending) { c.joined++; return pending; }
    const p = fill(key, path).finally(() => inFlight.delete(key));
    inFlight.set(key, p);
    return p;
  }
  // no single-flight: a miss while the key is being filled is one more call (a stampede fill)
  if (pending) c.stampede_fills++;
  inFlight.set(key, (pending || 0) + 1);
  return fill(key, path).finally(() => {
    const n = inFlight.get(key) - 1;
    if (n > 0) inFlight.set(key, n); else inFlight.delete(key);
  });
}

function render(page, parts) {
  const rows = [];
  for (const p of parts) for (const r of p.products) rows.push(`<li>${r.name}: ${r.price}</li>`);
  return `<!doctype html><title>${page}</title><h1>${page}</h1><ul>${rows.join('')}</ul>`;
}

const app = express();
app.disable('x-powered-by');
app.disable('etag');

app.get('/status', (req, res) => {
  const front = { ...c, queued: queued(), cache_keys: cache.size };
  c.open_sockets_max = c.open_sockets;
  c.queued_max = front.queued;
  const sreq = http.get({ host: API_HOST, port: API_PORT, path: '/status', agent: statusAgent }, (r) => {
    const chunks = [];
    r.on('data', (d) => chunks.push(d));
    r.on('end', () => {
      let backend = null;
      try { backend = JSON.parse(Buffer.concat(chunks).toString()); } catch (e) { /* null */ }
      send(backend);
    });
  });
  let sent = false;
  const send = (backend) => {
    if (sent) return;
    sent = true;
    res.json({ front, backend });
  };
  sreq.setTimeout(300, () => { sreq.destroy(); send(null); });
  sreq.on('error', () => send(null));
});

app.post('/admin/flush', (req, res) => {
  const n = cache.size;
  cache.clear();
  res.json({ flushed: n });
});

const PAGES = ['home', 'landing', 'gacha', 'raffle', 'catalog'];
const HOT = new Set(['home', 'landing']);

for (const page of PAGES) {
  app.get(`/${page}`, async (req, res) => {
    c.pages++;
    if (MAX_INFLIGHT > 0 && c.inflight >= MAX_INFLIGHT) {
      c.s429++;
      return res.status(429).send('busy');
    }
    c.inflight++;
    const id = HOT.has(page) ? 0 : Math.max(1, Math.min(1000, Number(req.query.id) || 1));
    const key = HOT.has(page) ? page : `${page}:${id}`;
    try {
      const [main, footer] = await Promise.all([
        get(key, `/api/${page}?id=${id}`),
        get('footer', '/api/footer'),
      ]);
      if (main === null || footer === null) {
        c.s404++;
        res.status(404).send('not found');
      } else {
        c.s200++;
        res.status(200).send(render(page, [main, footer]));
      }
    } catch (err) {
      if (err.kind === 'timeout') { c.s504++; res.status(504).send('backend timeout'); }
      else { c.s502++; res.status(502).send('bad gateway'); }
    } finally {
      c.inflight--;
    }
  });
}

app.listen(PORT, () => process.stdout.write(`storefront front ready on ${PORT}\n`));
