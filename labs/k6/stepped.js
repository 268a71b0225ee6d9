// stepped.js: stepped open-model load for the PHP lab (lab-spec §3).
//
// Each step jumps to a rate and holds it (ramping-arrival-rate, 0 s stage then HOLD s stage).
// Every request is tagged `stage:rNNNN` with the step it STARTED in. Abort guards look at the
// cumulative metrics (so they lag the knee); per-step sub-metric thresholds never abort and
// exist only so the end-of-test summary prints one line per step.
//
// Env: URL, STEPS (rps list), HOLD (s, 20), SLO_MS (200), ABORT_P95_MS (2.5 x SLO),
//      ABORT ('0' disables the guards), VUS (600 = preAllocated = max), TIMEOUT ('10s'),
//      PRE_VUS (optional: preAllocatedVUs below VUS, e.g. seed 002's 200 of 2000), IDLE (per
//      step, seconds at rate 0 before it: `perflab compare`'s per-step interleaving, where
//      another stack is loaded meanwhile; absent: none), RECOVER + RECOVER_HOLD (optional: after
//      the last step the rate drops to RECOVER rps for RECOVER_HOLD s, the recovery phase,
//      its requests tagged `stage:recover`).
import http from 'k6/http';
import exec from 'k6/execution';

const URL = __ENV.URL || 'http://tmp-perf-php-nginx/api/db';
const STEPS = (__ENV.STEPS || '50,100,150').split(',').map(Number);
const HOLD = Number(__ENV.HOLD || 20);
const SLO = Number(__ENV.SLO_MS || 200);
const ABORT_P95 = Number(__ENV.ABORT_P95_MS || SLO * 2.5);
const ABORT = __ENV.ABORT !== '0';
const VUS = Number(__ENV.VUS || 600);
const PRE_VUS = Math.min(Number(__ENV.PRE_VUS || VUS), VUS);
const TIMEOUT = __ENV.TIMEOUT || '10s';

if (STEPS.some((r) => !Number.isFinite(r) || r <= 0)) {
  throw new Error(`STEPS must be a comma-separated list of positive rates, got '${__ENV.STEPS}'`);
}

const IDLE = __ENV.IDLE ? __ENV.IDLE.split(',').map(Number) : STEPS.map(() => 0);
if (IDLE.length !== STEPS.length || IDLE.some((s) => !Number.isInteger(s) || s < 0)) {
  throw new Error(`IDLE must hold one whole number of seconds >= 0 per step, got '${__ENV.IDLE}'`);
}

const label = (r) => 'r' + String(r).padStart(4, '0');

// STARTS[i]: when step i starts, s from the scenario's start (after its idle time).
const STARTS = [];
const stages = [];
let clock = 0;
STEPS.forEach((r, i) => {
  if (IDLE[i] > 0) {
    if (i > 0) stages.push({ target: 0, duration: '0s' }); // rate 0 at once: the other stack's turn
    stages.push({ target: 0, duration: `${IDLE[i]}s` });
  }
  clock += IDLE[i];
  STARTS.push(clock);
  stages.push({ target: r, duration: '0s' }); // jump instantly to the step rate
  stages.push({ target: r, duration: `${HOLD}s` }); // hold it
  clock += HOLD;
});

const RECOVER = Number(__ENV.RECOVER || 0);
const RECOVER_HOLD = Number(__ENV.RECOVER_HOLD || 0);
if (RECOVER < 0 || !Number.isFinite(RECOVER) || (RECOVER > 0) !== (RECOVER_HOLD > 0)) {
  throw new Error(`RECOVER and RECOVER_HOLD go together, got '${__ENV.RECOVER}' '${__ENV.RECOVER_HOLD}'`);
}
// RECOVER_AT: when the recovery phase starts, s from the scenario's start (Infinity: none).
const RECOVER_AT = RECOVER > 0 ? clock : Infinity;
if (RECOVER > 0) {
  stages.push({ target: RECOVER, duration: '0s' }); // drop at once
  stages.push({ target: RECOVER, duration: `${RECOVER_HOLD}s` });
}

const thresholds = {
  // Global guard: abort once the run is clearly broken. Thresholds are evaluated on the
  // CUMULATIVE metric (all steps so far), so the abort lags the knee; a looser p95 keeps a
  // 1-2 s host stall from aborting early.
  http_req_failed: [{ threshold: 'rate<0.01', abortOnFail: ABORT, delayAbortEval: '10s' }],
  http_req_duration: [{ threshold: `p(95)<${ABORT_P95}`, abortOnFail: ABORT, delayAbortEval: '10s' }],
};
for (const r of STEPS) {
  // Per-step sub-metrics (no abort) so the end-of-test summary prints one line per step.
  thresholds[`http_req_duration{stage:${label(r)}}`] = [`p(95)<${SLO}`];
  thresholds[`http_req_failed{stage:${label(r)}}`] = ['rate<0.01'];
  thresholds[`http_reqs{stage:${label(r)}}`] = ['count>=0'];
}

export const options = {
  discardResponseBodies: true,
  summaryTrendStats: ['avg', 'med', 'p(90)', 'p(95)', 'p(99)', 'max', 'count'],
  thresholds,
  scenarios: {
    step: {
      executor: 'ramping-arrival-rate',
      startRate: IDLE[0] > 0 ? 0 : STEPS[0],
      timeUnit: '1s',
      preAllocatedVUs: PRE_VUS,
      maxVUs: VUS,
      stages,
    },
  },
};

export default function () {
  const elapsed = (Date.now() - exec.scenario.startTime) / 1000;
  let idx = STARTS.length - 1;
  while (idx > 0 && elapsed < STARTS[idx]) idx -= 1;
  const stage = elapsed >= RECOVER_AT ? 'recover' : label(STEPS[idx]);
  http.get(URL, { tags: { stage }, timeout: TIMEOUT });
}
