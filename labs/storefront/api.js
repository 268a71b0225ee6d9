'use strict';
// The storefront lab's backend API (issue 44, seed 004): Express over PostgreSQL. Each of its
// endpoints (/api/home, /api/landing, /api/gacha, /api/raffle, /api/catalog, /api/footer)
// reads one page of products and spends BURN_US of CPU on it (the serialisation and business
// logic of a real API), so a CPU cut on this container (cgroup cpu.max) slows every call.
// GET /status: its counters (served, in flight, errors, CPU). Env: PORT, POOL_MAX, BURN_US,
// PG* (connection).
const express = require('express');
const { Pool } = require('pg');

const PORT = Number(process.env.PORT || 3001);
const POOL_MAX = Number(process.env.POOL_MAX || 10);
const BURN_US = Number(process.env.BURN_US || 0);
const PAGES = { home: 1, landing: 101, gacha: 201, raffle: 301, catalog: 401, footer: 501 };

const counters = { served: 0, errors: 0, inflight: 0, inflight_max: 0 };

// A busy loop on this process's CPU time, not the wall clock: a throttled loop still burns it.
function burn(us) {
  const start = process.cpuUsage();
  let x = 0;
  for (;;) {
    for (let i = 0; i < 200; i++) x = (x * 1103515245 + 12345) % 2147483648;
    const d = process.cpuUsage(start);
    if (d.user + d.system >= us) return x;
  }
}

async function main() {
  const pool = new Pool({ max: POOL_MAX, idleTimeoutMillis: 0, connectionTimeoutMillis: 10000 });
  pool.on('error', () => { counters.errors++; });
  const clients = await Promise.all(Array.from({ length: POOL_MAX }, () => pool.connect()));
  clients.forEach((c) => c.release());

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.get('/status', (req, res) => {
    const cpu = process.cpuUsage();
    res.json({ ...counters, cpu_ms: Math.round((cpu.user + cpu.system) / 1000) });
    counters.inflight_max = counters.inflight;
  });
  app.get('/api/:page', async (req, res) => {
    const base = PAGES[req.params.page];
    if (!base) return res.status(404).json({ error: 'no such page' });
    counters.inflight++;
    if (counters.inflight > counters.inflight_max) counters.inflight_max = counters.inflight;
    try {
      const r = await pool.query(
        'SELECT id, name, price FROM products WHERE id BETWEEN $1 AND $1 + 19 ORDER BY id',
        [((base + (Number(req.query.id) || 0) * 20) % 9980) + 1],
      );
      if (BURN_US > 0) burn(BURN_US);
      counters.served++;
      res.json({ page: req.params.page, products: r.rows });
    } catch (err) {
      counters.errors++;
      res.status(500).json({ error: String((err && err.message) || err) });
    } finally {
      counters.inflight--;
    }
  });
  app.listen(PORT, () => process.stdout.write(`storefront api ready on ${PORT}\n`));
}

main().catch((err) => {
  process.stderr.write(`boot failed: ${(err && err.message) || err}\n`);
  process.exit(1);
});
