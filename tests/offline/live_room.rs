//! The trainer's room (`perflab status --live`) over a real lock's queue: 20 participants
//! waiting (live processes with their queue entries, one with a hostile live-page URL), read in
//! one refresh well under 100 ms, served as `/data` and a page that links only the `http://`
//! pages, and a room without participants.
use std::net::SocketAddr;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use perflab::live::room::Room;
use perflab::live::server::{Serve, Server, Source};

fn waiter(lock: &std::path::Path, p: &Child, i: usize) {
    let live = match i {
        7 => "javascript:alert(1)".to_string(),
        _ => format!("http://127.0.0.1:{}/", 40000 + i),
    };
    let entry = perflab::lock::queue::Waiter {
        pid: p.id(),
        start: perflab::owner::proc_state(p.id()).unwrap().start,
        boot: String::new(),
        host: perflab::owner::this_host(),
        user: format!("user{i}<b>"),
        experiment: "exp1".into(),
        since: chrono::Utc::now() - chrono::Duration::seconds(100 - i as i64),
        expected_s: Some(60),
        live: Some(live),
    };
    let queue = perflab::lock::queue::queue_dir(lock);
    std::fs::create_dir_all(&queue).unwrap();
    let file = queue.join(format!("{}.json", p.id()));
    std::fs::write(file, serde_json::to_vec(&entry).unwrap()).unwrap();
}

#[tokio::test]
async fn twenty_participants_in_one_refresh_under_100_ms() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("perflab.lock");
    let mut procs: Vec<Child> = (0..20)
        .map(|_| Command::new("sleep").arg("60").spawn().unwrap())
        .collect();
    for (i, p) in procs.iter().enumerate() {
        waiter(&lock, p, i);
    }
    let room = Room::default();
    let client = reqwest::Client::new();
    let t0 = Instant::now();
    room.refresh(&lock, &client).await;
    let took = t0.elapsed();
    let d = room.data();
    assert_eq!(d.participants.len(), 20);
    assert!(d.participants.iter().all(|p| p.state == "waiting"));
    assert_eq!(d.participants[0].user, "user0<b>", "first come first");
    let starts: Vec<_> = d.participants.iter().map(|p| p.expected_start).collect();
    assert!(starts.windows(2).all(|w| w[0] <= w[1]), "in queue order");
    assert_eq!(d.participants[7].live, None, "a javascript: URL is dropped");
    assert_eq!(
        d.participants[8].live.as_deref(),
        Some("http://127.0.0.1:40008/")
    );
    assert!(took < Duration::from_millis(100), "refresh took {took:?}");
    eprintln!("20 participants: refresh {:.1} ms", d.refresh_ms);

    let lo: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let s = Server::start(lo, None, Serve::Page, Source::Room(room.clone()))
        .await
        .unwrap();
    let base = format!("http://127.0.0.1:{}", s.addr.port());
    let t0 = Instant::now();
    let body = client.get(format!("{base}/data")).send().await.unwrap();
    let j: serde_json::Value = body.json().await.unwrap();
    assert!(t0.elapsed() < Duration::from_millis(100));
    assert_eq!(j["participants"].as_array().map(Vec::len), Some(20));
    let page = client.get(format!("{base}/")).send().await.unwrap();
    let page = page.text().await.unwrap();
    assert!(page.contains("p.live.startsWith(\"http://\")") && !page.contains("innerHTML"));
    // the run's routes are not the room's
    let r = client.get(format!("{base}/metrics")).send().await.unwrap();
    assert_eq!(r.status(), reqwest::StatusCode::NOT_FOUND);
    s.stop().await;
    for p in &mut procs {
        let _ = p.kill();
        let _ = p.wait();
    }
    // nobody left: an empty room
    room.refresh(&lock, &client).await;
    assert!(room.data().participants.is_empty());
}

/// The room's "finished today": the rounds recorded beside the lock (`lock::done`, what each
/// round of `perflab run` writes as it ends), newest last in `/data`, yesterday's left out, a
/// hostile experiment name kept as text for the page's `textContent`.
#[tokio::test]
async fn the_rooms_finished_runs_are_todays_records() {
    use perflab::lock::done::{Finished, record};
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("perflab.lock");
    let now = chrono::Utc::now();
    let fin = |exp: &str, ago_h: i64| Finished {
        user: "ana".into(),
        experiment: exp.into(),
        run: "20261205T101500Z-r1".into(),
        state: "complete".into(),
        verdict: "last passing 90; knee 120 rps".into(),
        ended: now - chrono::Duration::hours(ago_h),
    };
    // yesterday's (25 h ago is always another UTC day) and today's, in any order
    record(&lock, &fin("exp0", 25));
    record(&lock, &fin("<img src=x onerror=alert(1)>", 0));
    let room = Room::default();
    room.refresh(&lock, &reqwest::Client::new()).await;
    let f = room.data().finished;
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].experiment, "<img src=x onerror=alert(1)>");
    let lo: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let s = Server::start(lo, None, Serve::Page, Source::Room(room.clone()))
        .await
        .unwrap();
    let base = format!("http://127.0.0.1:{}", s.addr.port());
    let j: serde_json::Value = reqwest::get(format!("{base}/data"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(j["finished"][0]["verdict"], "last passing 90; knee 120 rps");
    let page = reqwest::get(format!("{base}/"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("Finished today") && !page.contains("innerHTML"));
    s.stop().await;
}
