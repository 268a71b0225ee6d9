// breakpoint.js: warm-up, then ramp + hold per step, open or closed model (lab-spec §4).
//
// Only requests started inside a HOLD window are measured: they get `step:NN_rpsX`
// (closed: `NN_vusX`) and `phase:hold`. Requests started in a RAMP window get `step:ramp`,
// `phase:ramp`; warm-up requests get `step:warmup`, `phase:warmup`. Abort guards look only at
// `{phase:hold}` and are cumulative over all hold windows so far; delayAbortEval counts from
// the TEST start, so it is WARMUP + 30 s. Per-step sub-metric thresholds never abort: they
// make the summary print one line per step.
//
// Env: BASE, ENDPOINT, MODEL (open|closed), STEPS, RAMP (8), HOLD (22), WARMUP (20),
//      WARMUP_RPS (20), SLO_P95 (100), PRE_VUS (100), MAX_VUS (300), SLEEP (0.2, closed think
//      time), NOABORT ('1' disables the guards), TIMEOUT ('5s'), IDLE (per step, seconds at
//      rate 0 before its ramp: `perflab compare`'s per-step interleaving, where another
//      stack is loaded meanwhile; absent: none).
import http from 'k6/http';
import exec from 'k6/execution';
import { sleep } from 'k6';

const BASE = __ENV.BASE || 'http://tmp-perf-node-app:3000';
const ENDPOINT = __ENV.ENDPOINT || '/db';
const MODEL = __ENV.MODEL || 'open';
const STEPS = (__ENV.STEPS || '100,150,200').split(',').map(Number);
const RAMP = Number(__ENV.RAMP || 8);
const HOLD = Number(__ENV.HOLD || 22);
const WARMUP = Number(__ENV.WARMUP || 20);
const WARMUP_RPS = Number(__ENV.WARMUP_RPS || 20);
const SLO = Number(__ENV.SLO_P95 || 100);
const PRE_VUS = Number(__ENV.PRE_VUS || 100);
const MAX_VUS = Number(__ENV.MAX_VUS || 300);
const SLEEP = Number(__ENV.SLEEP || 0.2);
const TIMEOUT = __ENV.TIMEOUT || '5s';
const STEP_LEN = RAMP + HOLD;
const IDLE = __ENV.IDLE ? __ENV.IDLE.split(',').map(Number) : STEPS.map(() => 0);

if (MODEL !== 'open' && MODEL !== 'closed') {
  throw new Error(`MODEL must be 'open' or 'closed', got '${MODEL}'`);
}
if (STEPS.some((s) => !Number.isFinite(s) || s <= 0)) {
  throw new Error(`STEPS must be a comma-separated list of positive numbers, got '${__ENV.STEPS}'`);
}

if (IDLE.length !== STEPS.length || IDLE.some((s) => !Number.isInteger(s) || s < 0)) {
  throw new Error(`IDLE must hold one whole number of seconds >= 0 per step, got '${__ENV.IDLE}'`);
}

// Each step starts (its ramp) after its idle time; STARTS[i] is s from the scenario's start.
const STARTS = [];
const stages = [];
let clock = 0;
STEPS.forEach((s, i) => {
  if (IDLE[i] > 0) {
    // Rate 0 at once (the other stack's turn), then the ramp from 0 to this step.
    if (i > 0) stages.push({ target: 0, duration: '0s' });
    stages.push({ target: 0, duration: `${IDLE[i]}s` });
  }
  clock += IDLE[i];
  STARTS.push(clock);
  stages.push({ target: s, duration: `${RAMP}s` });
  stages.push({ target: s, duration: `${HOLD}s` });
  clock += STEP_LEN;
});

const stepName = (i) => `${String(i + 1).padStart(2, '0')}_${MODEL === 'open' ? 'rps' : 'vus'}${STEPS[i]}`;

const scenario = MODEL === 'open'
  ? { executor: 'ramping-arrival-rate', startRate: 0, timeUnit: '1s', startTime: `${WARMUP}s`,
      preAllocatedVUs: PRE_VUS, maxVUs: MAX_VUS, stages }
  : { executor: 'ramping-vus', startVUs: 0, startTime: `${WARMUP}s`, stages, gracefulRampDown: '5s' };

const ABORT = __ENV.NOABORT !== '1'; // NOABORT=1 keeps running past the break (to watch the queue)
// Abort thresholds only look at HOLD windows (tag phase:hold): warm-up and ramp windows are
// excluded because every minute boundary (host stall) falls in a ramp window. They are
// CUMULATIVE over all hold windows so far, so they trip some time after the real knee.
// delayAbortEval counts from the TEST start, so the warm-up is added.
const ABORT_DELAY = `${WARMUP + 30}s`;
const thresholds = {
  'http_req_failed{phase:hold}': [{ threshold: 'rate<0.01', abortOnFail: ABORT, delayAbortEval: ABORT_DELAY }],
  'http_req_duration{phase:hold}': [{ threshold: `p(95)<${SLO}`, abortOnFail: ABORT, delayAbortEval: ABORT_DELAY }],
  'http_req_duration{scenario:breakpoint}': ['max>=0'], // display only (includes ramp windows)
  dropped_iterations: ['count>=0'], // display only
};
// Per-step sub-metrics (no abort): the summary shows p95/p99, fail rate and request count for
// every HOLD window, so the knee is visible step by step.
STEPS.forEach((_, i) => {
  thresholds[`http_req_duration{step:${stepName(i)}}`] = [`p(95)<${SLO}`];
  thresholds[`http_req_failed{step:${stepName(i)}}`] = ['rate<0.01'];
  thresholds[`http_reqs{step:${stepName(i)}}`] = ['count>=0'];
});

const scenarios = { breakpoint: scenario };
if (WARMUP > 0) {
  scenarios.warmup = { executor: 'constant-arrival-rate', rate: WARMUP_RPS, timeUnit: '1s',
    duration: `${WARMUP}s`, preAllocatedVUs: WARMUP_RPS, maxVUs: Math.max(50, WARMUP_RPS), exec: 'warm' };
}

export const options = {
  discardResponseBodies: true,
  summaryTrendStats: ['avg', 'med', 'p(90)', 'p(95)', 'p(99)', 'max', 'count'],
  scenarios,
  thresholds,
};

export function warm() {
  http.get(`${BASE}${ENDPOINT}`, { timeout: TIMEOUT, tags: { step: 'warmup', phase: 'warmup' } });
}

export default function () {
  const t = (Date.now() - exec.scenario.startTime) / 1000;
  let i = STARTS.length - 1;
  while (i > 0 && t < STARTS[i]) i -= 1;
  const inStep = t - STARTS[i];
  const inHold = inStep >= RAMP && inStep < STEP_LEN;
  http.get(`${BASE}${ENDPOINT}`, { timeout: TIMEOUT,
    tags: { step: inHold ? stepName(i) : 'ramp', phase: inHold ? 'hold' : 'ramp' } });
  if (MODEL === 'closed') sleep(SLEEP);
}
