// drop.js: the drop profile of seed 004 (a storefront's sale opening) for the storefront lab.
//
// The steps are stepped.js's (jump to each rate, hold; requests tagged `stage:rNNNN` with the
// step their journey STARTED in; the catalog's drop profile gives 25/50/75/100/150 % of PEAK),
// then an optional ramp to 0 (RAMP_DOWN s, tagged `stage:rampdown`). Each iteration is one
// user's arrival: a journey to one page drawn from JOURNEYS' weights, retried when its answer
// is not a 200 as RETRY says:
//   none       one request;
//   immediate  again at once, as a refresh button does, up to MAX_RETRIES times;
//   backoff    after a wait drawn from 0 to min(BACKOFF_CAP_MS, BACKOFF_BASE_MS x 2^attempt)
//              (capped exponential backoff with full jitter), up to MAX_RETRIES times;
// and with RETRY_BUDGET (0-1) a client retries only while its retries stay within that share
// of its first attempts (a token bucket per VU: each journey deposits RETRY_BUDGET, a retry
// takes 1, at most 10 kept).
// Per-class counters: class_200, class_429, class_5xx, class_502_504 (a subset of 5xx),
// class_timeout (no answer within TIMEOUT), class_other; journeys, journeys_ok, retries,
// retries_denied (the budget said no).
//
// Env: BASE, STEPS, HOLD, TIMEOUT, VUS, PRE_VUS, ABORT, SLO_MS, ABORT_P95_MS, RECOVER,
//      RECOVER_HOLD (as stepped.js), JOURNEYS ('home:40,landing:20,...'), RETRY, MAX_RETRIES,
//      BACKOFF_BASE_MS, BACKOFF_CAP_MS, RETRY_BUDGET, ITEMS (ids a cold page picks from),
//      RAMP_DOWN (s).
import http from 'k6/http';
import exec from 'k6/execution';
import { randomSeed, sleep } from 'k6';
import { Counter } from 'k6/metrics';

const BASE = (__ENV.BASE || 'http://front:3000').replace(/\/$/, '');
const STEPS = (__ENV.STEPS || '10,20,30,40,60').split(',').map(Number);
const HOLD = Number(__ENV.HOLD || 20);
const SLO = Number(__ENV.SLO_MS || 200);
const ABORT_P95 = Number(__ENV.ABORT_P95_MS || SLO * 2.5);
const ABORT = __ENV.ABORT !== '0';
const VUS = Number(__ENV.VUS || 600);
const PRE_VUS = Math.min(Number(__ENV.PRE_VUS || VUS), VUS);
const TIMEOUT = __ENV.TIMEOUT || '10s';
const RETRY = __ENV.RETRY || 'none';
const MAX_RETRIES = Number(__ENV.MAX_RETRIES || 3);
const BASE_MS = Number(__ENV.BACKOFF_BASE_MS || 100);
const CAP_MS = Number(__ENV.BACKOFF_CAP_MS || 2000);
const BUDGET = __ENV.RETRY_BUDGET === undefined ? null : Number(__ENV.RETRY_BUDGET);
const ITEMS = Number(__ENV.ITEMS || 50);
const RAMP_DOWN = Number(__ENV.RAMP_DOWN || 0);
// SEED (load.drop.seed): each VU's Math.random seeded apart, reproducibly per seed.
const SEED = __ENV.SEED === undefined ? null : Number(__ENV.SEED);
if (SEED !== null) {
  if (!Number.isInteger(SEED) || SEED < 0) throw new Error(`SEED must be a whole number >= 0, got '${__ENV.SEED}'`);
  randomSeed(SEED * 1000 + __VU);
}

if (STEPS.some((r) => !Number.isFinite(r) || r <= 0)) {
  throw new Error(`STEPS must be a comma-separated list of positive rates, got '${__ENV.STEPS}'`);
}
if (!['none', 'immediate', 'backoff'].includes(RETRY)) {
  throw new Error(`RETRY must be none, immediate or backoff, got '${RETRY}'`);
}
if (BUDGET !== null && !(BUDGET >= 0 && BUDGET <= 1)) {
  throw new Error(`RETRY_BUDGET must be between 0 and 1, got '${__ENV.RETRY_BUDGET}'`);
}
// JOURNEYS: page:weight pairs summing to 100, drawn by cumulative weight.
const JOURNEYS = (__ENV.JOURNEYS || 'home:40,landing:20,gacha:15,raffle:15,catalog:10')
  .split(',')
  .map((p) => {
    const [page, w] = p.split(':');
    return { page, weight: Number(w) };
  });
const TOTAL = JOURNEYS.reduce((a, j) => a + j.weight, 0);
if (TOTAL !== 100 || JOURNEYS.some((j) => !j.page || !(j.weight >= 0))) {
  throw new Error(`JOURNEYS' weights must sum to 100, got '${__ENV.JOURNEYS}' (${TOTAL})`);
}
const HOT = new Set(['home', 'landing']);

const label = (r) => 'r' + String(r).padStart(4, '0');
const STARTS = [];
const stages = [];
let clock = 0;
for (const r of STEPS) {
  STARTS.push(clock);
  stages.push({ target: r, duration: '0s' });
  stages.push({ target: r, duration: `${HOLD}s` });
  clock += HOLD;
}
const RECOVER = Number(__ENV.RECOVER || 0);
const RECOVER_HOLD = Number(__ENV.RECOVER_HOLD || 0);
const RECOVER_AT = RECOVER > 0 ? clock : Infinity;
if (RECOVER > 0) {
  stages.push({ target: RECOVER, duration: '0s' });
  stages.push({ target: RECOVER, duration: `${RECOVER_HOLD}s` });
  clock += RECOVER_HOLD;
}
const RAMP_DOWN_AT = RAMP_DOWN > 0 ? clock : Infinity;
if (RAMP_DOWN > 0) stages.push({ target: 0, duration: `${RAMP_DOWN}s` });

const thresholds = {
  http_req_failed: [{ threshold: 'rate<0.20', abortOnFail: ABORT, delayAbortEval: '30s' }],
  http_req_duration: [{ threshold: `p(95)<${ABORT_P95}`, abortOnFail: ABORT, delayAbortEval: '30s' }],
};
for (const r of STEPS) {
  thresholds[`http_req_duration{stage:${label(r)}}`] = [`p(95)<${SLO}`];
  thresholds[`http_reqs{stage:${label(r)}}`] = ['count>=0'];
}

export const options = {
  discardResponseBodies: true,
  summaryTrendStats: ['avg', 'med', 'p(90)', 'p(95)', 'p(99)', 'max', 'count'],
  thresholds,
  scenarios: {
    drop: {
      executor: 'ramping-arrival-rate',
      startRate: STEPS[0],
      timeUnit: '1s',
      preAllocatedVUs: PRE_VUS,
      maxVUs: VUS,
      stages,
    },
  },
};

const counters = {
  c200: new Counter('class_200'),
  c429: new Counter('class_429'),
  c5xx: new Counter('class_5xx'),
  c50x: new Counter('class_502_504'),
  timeout: new Counter('class_timeout'),
  other: new Counter('class_other'),
  journeys: new Counter('journeys'),
  ok: new Counter('journeys_ok'),
  retries: new Counter('retries'),
  denied: new Counter('retries_denied'),
};

// One response into its class; true for a 200.
function classify(res) {
  const s = res.status;
  if (s === 200) { counters.c200.add(1); return true; }
  if (s === 429) counters.c429.add(1);
  else if (s >= 500 && s <= 599) {
    counters.c5xx.add(1);
    if (s >= 502 && s <= 504) counters.c50x.add(1);
  } else if (s === 0 && res.error_code === 1050) counters.timeout.add(1);
  else counters.other.add(1);
  return false;
}

function pick() {
  let x = Math.random() * 100;
  for (const j of JOURNEYS) {
    if (x < j.weight) return j.page;
    x -= j.weight;
  }
  return JOURNEYS[JOURNEYS.length - 1].page;
}

// this VU's retry budget (tokens)
let tokens = 0;

export default function () {
  const elapsed = (Date.now() - exec.scenario.startTime) / 1000;
  let idx = STARTS.length - 1;
  while (idx > 0 && elapsed < STARTS[idx]) idx -= 1;
  let stage = label(STEPS[idx]);
  if (elapsed >= RAMP_DOWN_AT) stage = 'rampdown';
  else if (elapsed >= RECOVER_AT) stage = 'recover';
  const page = pick();
  const url = HOT.has(page) ? `${BASE}/${page}` : `${BASE}/${page}?id=${1 + Math.floor(Math.random() * ITEMS)}`;
  const params = { tags: { stage, name: `/${page}` }, timeout: TIMEOUT };
  counters.journeys.add(1);
  if (BUDGET !== null) tokens = Math.min(10, tokens + BUDGET);
  for (let attempt = 0; ; attempt++) {
    if (classify(http.get(url, params))) { counters.ok.add(1); return; }
    if (RETRY === 'none' || attempt >= MAX_RETRIES) return;
    if (BUDGET !== null) {
      if (tokens < 1) { counters.denied.add(1); return; }
      tokens -= 1;
    }
    counters.retries.add(1);
    if (RETRY === 'backoff') sleep((Math.random() * Math.min(CAP_MS, BASE_MS * 2 ** attempt)) / 1000);
  }
}
