//! The report's glossary: every abbreviation of its tables and verdicts explained once, here
//! (the one registry); printed as the closing block of report.txt/report.md and as the
//! tooltips of report.html's table headers.
use super::table::{Block, Table};

/// The columns of the workers block after `step` (`content::logs::workers_block`); the entry
/// "requests by worker" below explains them.
pub(crate) const WORKER_HEADERS: [&str; 9] = [
    "workers",
    "always failed",
    "mixed",
    "their share",
    "per worker min",
    "per worker max",
    "failed %d p50",
    "ok %d p50",
    "out of turn",
];

/// One explained term: how it is written in the report, the table headers it names (exact
/// spellings), and what it means.
pub struct Entry {
    pub term: &'static str,
    pub headers: &'static [&'static str],
    pub text: &'static str,
}

const fn e(term: &'static str, headers: &'static [&'static str], text: &'static str) -> Entry {
    Entry {
        term,
        headers,
        text,
    }
}

/// The CPU columns `<role>%` (`fpm%`, `pg%`, `k6%`, ...): matched by [`lookup`], not by spelling.
pub(crate) const ROLE_PCT: &str = "<role>%";

/// The registry, in reading order.
pub(crate) const GLOSSARY: &[Entry] = &[
    e(
        "knee",
        &[],
        "the first failing step that no later passing step follows: where the service stops keeping up",
    ),
    e(
        "SLO",
        &[],
        "service-level objective: the p95 (and p99) latency a passing step must stay under (criterion 1)",
    ),
    e(
        "step",
        &["step", "probe"],
        "one held level of offered load (rps, or VUs in a closed model); probe: a refinement's extra step",
    ),
    e(
        "target",
        &["target"],
        "the step's offered load: requests per second (open model) or VUs (closed model)",
    ),
    e(
        "sent/s",
        &["sent/s"],
        "requests k6 started per second of the step's window",
    ),
    e(
        "ok/s",
        &["ok/s"],
        "successful responses completed per second of the window: the goodput",
    ),
    e(
        "p50/p95/p99",
        &["p50", "p95", "p99", "p95 ms", "p50ms", "p95ms"],
        "latency percentiles in ms: 50, 95 or 99 % of the requests were at least this fast",
    ),
    e("max", &["max"], "the slowest request's latency (ms)"),
    e(
        "ok p95",
        &["ok p95"],
        "p95 over the successful requests only",
    ),
    e(
        "failed",
        &["failed"],
        "share of the step's requests k6 counted as failed (4xx/5xx, timeouts, transport errors; criterion 2)",
    ),
    e(
        "non-200",
        &["non-200", "non200"],
        "responses by HTTP status other than 200 (status x count)",
    ),
    e(
        "drop",
        &["drop", "dropped"],
        "iterations k6 could not start because every VU was busy (criterion 4)",
    ),
    e(
        "VU",
        &["maxVU", "VUs", "L vus"],
        "k6 virtual user: one request at a time; maxVU = most VUs in use in the step",
    ),
    e(
        ROLE_PCT,
        &[],
        "a container role's CPU in % of one core (fpm, nginx, app, demo: the app box; pg: PostgreSQL; k6: the load generator); 200 = two cores busy",
    ),
    e(
        "msCPU/ok",
        &["msCPU/ok"],
        "the app box's CPU milliseconds per successful response",
    ),
    e(
        "psi%",
        &["psi%", "psi"],
        "CPU pressure stall (PSI): % of the time tasks waited for a CPU",
    ),
    e(
        "p99 n",
        &["p99 n"],
        "requests behind the p99 (1 % of the step): under 50 (!) the p99 is a few samples",
    ),
    e(
        "stability",
        &["stability"],
        "stable: requests in flight not growing between the window's halves (Little's law is read only there)",
    ),
    e(
        "verdict",
        &["verdict"],
        "pass, fail [criteria that failed], transient (failed, then a later step passed); (cut) k6 stopped the step, (host) the host took the CPUs",
    ),
    e("why", &["why"], "the reason given for the row"),
    e(
        "utc",
        &["utc", "t"],
        "wall-clock second (UTC); t = seconds since the first step started",
    ),
    e("done", &["done"], "responses completed in that second"),
    e(
        "inflight",
        &["inflight", "L in-flight"],
        "requests started and not yet answered (time-averaged)",
    ),
    e("dockerd%", &["dockerd%"], "dockerd's CPU in % of one core"),
    e(
        "λ",
        &["λ/s"],
        "lambda: the arrival rate, requests per second",
    ),
    e(
        "W",
        &["W ms"],
        "mean time a request spends in the system (latency)",
    ),
    e(
        "L = λW",
        &["λW", "diff", "L app"],
        "Little's law: requests in the system = arrival rate x time in it; diff = how far λW is from the counted L",
    ),
    e(
        "W=Lmax/λ",
        &["W=Lmax/λ"],
        "the latency the VU cap allows: at most Lmax requests in flight at λ per second",
    ),
    e(
        "1st/2nd half",
        &["1st half", "2nd half"],
        "mean requests in flight in each half of the step's window: growing means unstable",
    ),
    e(
        "nominal/achieved",
        &["nominal/s", "achieved/s", "missing"],
        "closed model: the rate the VUs would send at the first step's latency, the rate they did, and the requests never sent",
    ),
    e(
        "R=N/X-Z",
        &["R=N/X-Z ms"],
        "response time from the interactive law: VUs / throughput - think time",
    ),
    e(
        "ρ/(1-ρ)",
        &[],
        "rho = utilisation of the busiest resource; queueing grows as ρ/(1-ρ), without bound as ρ nears 1",
    ),
    e(
        "ELU",
        &[],
        "Node's event-loop utilisation: share of the time the loop was busy (1.00 = always)",
    ),
    e("ELD", &[], "Node's event-loop delay: how late timers fired"),
    e(
        "ClientRead",
        &[],
        "a PostgreSQL backend idle waiting for its client (the database waits for the app)",
    ),
    e(
        "steal",
        &["steal"],
        "CPU time the hypervisor gave to other virtual machines (cores)",
    ),
    e(
        "busy/lab/other",
        &[
            "busy",
            "lab",
            "perflab/dockerd",
            "other",
            "largest outside the lab",
        ],
        "host CPU in mean cores: busy = lab containers + perflab and dockerd + steal + other processes",
    ),
    e(
        "k6/perflab",
        &["k6", "perflab"],
        "cross-check: the same figure as k6's own summary and as perflab computes it",
    ),
    e(
        "field",
        &["field"],
        "the figure compared (cross-check) or the experiment's setting fitted (--fit)",
    ),
    e(
        "fit",
        &["article", "fitted", "rule"],
        "--fit: the article's value of a setting, the value fitted to this host, and the rule that fitted it",
    ),
    e(
        "access log",
        &[
            "fpm n",
            "fpm %d p50",
            "fpm %C",
            "nginx n",
            "request_time p50",
            "connect p50",
            "backlog p50",
        ],
        "php-fpm (%d duration, %C CPU) and nginx ($request_time, upstream connect) log fields per step; backlog = nginx - fpm p50: time in the listen queue",
    ),
    e(
        "requests by worker",
        &WORKER_HEADERS,
        "php-fpm's access log by worker (%p) per step: workers that served, those whose every request failed (>= 500) or some, the share of requests the always-failing took, the fewest and most one served, %d p50 of failed and of ok requests; out of turn: requests a worker took before the accept queue's longest waiter (steals), with (+n) those taken by always-failing workers and (-n) always-failing workers sent to the queue's end by one",
    ),
    e(
        "log",
        &["log", "count", "message"],
        "distinct log messages and how often each appeared",
    ),
    e(
        "omission",
        &["load", "requests"],
        "coordinated omission: the open load, its closed twin and the twin corrected from its intended schedule",
    ),
    e(
        "trigger",
        &["span", "from s", "to s", "arrivals/s", "req/arrival"],
        "a CPU cut or a cache flush in one step (`load.trigger`): goodput (ok/s), requests sent and user arrivals per second before it and over the step's end, s from the trigger; req/arrival = requests per arrival, retries included",
    ),
    e(
        "classes",
        &["200", "429", "5xx", "502-504", "no answer"],
        "responses by class per step: 200, 429 (shed), any 5xx (502-504 among them), no answer (status 0: the client's timeout or a reset); other = any other status (a 404 of a cached failure)",
    ),
    e(
        "USL",
        &["N", "X", "X fitted", "residual"],
        "Universal Scalability Law X(N) = γN / (1 + α(N-1) + βN(N-1)) fitted to a closed run's clean steps: N the VUs, X the ok/s measured, X fitted the curve's, residual X - X fitted",
    ),
];

/// The entry explaining a table header, if any.
pub fn lookup(header: &str) -> Option<&'static Entry> {
    let h = header.trim();
    if let Some(x) = GLOSSARY.iter().find(|x| x.headers.contains(&h)) {
        return Some(x);
    }
    h.strip_suffix('%')
        .filter(|r| crate::lab::Role::container_columns().any(|c| c == *r))?;
    GLOSSARY.iter().find(|x| x.term == ROLE_PCT)
}

/// Whether `term` stands in `text` as a word (not inside another word).
fn mentions(text: &str, term: &str) -> bool {
    text.match_indices(term).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + term.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// The glossary of `blocks`: the entries of their table headers and of the terms their text
/// uses, in registry order; `None` when nothing needs explaining.
pub(crate) fn glossary_block(blocks: &[Block]) -> Option<Block> {
    let mut used: Vec<&'static str> = Vec::new();
    let mut text = String::new();
    for b in blocks {
        text.push_str(&b.body_text());
        for h in b.table.iter().flat_map(|t| &t.headers) {
            used.extend(lookup(h).map(|x| x.term));
        }
    }
    let mut t = Table::new(["term", "meaning"]);
    t.left = vec![0, 1];
    for x in GLOSSARY {
        if used.contains(&x.term) || (x.headers.is_empty() && mentions(&text, x.term)) {
            t.push(vec![x.term.to_string(), x.text.to_string()]);
        }
    }
    if t.rows.is_empty() {
        return None;
    }
    let mut b = Block::new("Glossary");
    b.table = Some(t);
    Some(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_and_role_columns_find_their_entry() {
        assert_eq!(lookup("p95").map(|x| x.term), Some("p50/p95/p99"));
        assert_eq!(lookup("fpm%").map(|x| x.term), Some(ROLE_PCT));
        assert_eq!(lookup("psi%").map(|x| x.term), Some("psi%"));
        assert!(lookup("zzz%").is_none());
        assert!(lookup("nonsense").is_none());
    }

    #[test]
    fn each_header_spelling_has_one_home() {
        let mut seen = std::collections::BTreeSet::new();
        for x in GLOSSARY {
            assert!(seen.insert(x.term), "{} twice", x.term);
            for h in x.headers {
                assert!(seen.insert(h) || *h == x.term, "{h} in two entries");
            }
        }
    }

    #[test]
    fn terms_in_text_are_words_not_parts_of_words() {
        assert!(mentions("knee 180 rps", "knee"));
        assert!(!mentions("kneel", "knee"));
        assert!(mentions("ELU 1.00", "ELU"));
        assert!(!mentions("VELUM", "ELU"));
    }
}
