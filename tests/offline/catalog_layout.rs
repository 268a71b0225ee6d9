//! CPU layouts for 2, 3, 4 and 16 online CPUs, overrides, and the host's online list.
use perflab::plan::Slot;
use perflab::plan::layout::{self, CpuSet};

fn online(s: &str) -> CpuSet {
    CpuSet::parse(s).unwrap()
}

#[test]
fn four_cpus_is_the_article_layout() {
    let l = layout::auto(&online("0-3")).unwrap();
    assert_eq!(
        (
            l.cpuset(Slot::Loadgen),
            l.cpuset(Slot::Db),
            l.cpuset(Slot::App)
        ),
        ("0".into(), "1".into(), "2-3".into())
    );
    assert!(l.caveats.is_empty());
}

#[test]
fn sixteen_cpus_keep_a_two_cpu_app_box() {
    let l = layout::auto(&online("0-15")).unwrap();
    assert_eq!(
        (
            l.cpuset(Slot::Loadgen),
            l.cpuset(Slot::Db),
            l.cpuset(Slot::App)
        ),
        ("0".into(), "1".into(), "2-3".into())
    );
}

#[test]
fn three_cpus() {
    let l = layout::auto(&online("0-2")).unwrap();
    assert_eq!(
        (
            l.cpuset(Slot::Loadgen),
            l.cpuset(Slot::Db),
            l.cpuset(Slot::App)
        ),
        ("0".into(), "1".into(), "2".into())
    );
    assert_eq!(l.caveats.len(), 1);
}

#[test]
fn two_cpus_share_loadgen_and_db_with_a_caveat() {
    let l = layout::auto(&online("0-1")).unwrap();
    assert_eq!(
        (
            l.cpuset(Slot::Loadgen),
            l.cpuset(Slot::Db),
            l.cpuset(Slot::App)
        ),
        ("0".into(), "0".into(), "1".into())
    );
    assert!(l.caveats[0].contains("2 online CPUs"));
}

#[test]
fn holes_in_the_online_list_are_respected() {
    let l = layout::auto(&online("0,2,5-6")).unwrap();
    assert_eq!(
        (
            l.cpuset(Slot::Loadgen),
            l.cpuset(Slot::Db),
            l.cpuset(Slot::App)
        ),
        ("0".into(), "2".into(), "5-6".into())
    );
}

#[test]
fn one_cpu_is_refused_unless_pinned_by_hand() {
    assert!(layout::auto(&online("0")).is_err());
    let l = layout::resolve(&online("0"), Some("loadgen=0,db=0,app=0"), true).unwrap();
    assert!(l.forced);
}

#[test]
fn override_parsing() {
    let l = layout::resolve(&online("0-7"), Some("loadgen=0,db=1,app=4,5"), false).unwrap();
    assert_eq!(l.cpuset(Slot::App), "4-5");
    let l = layout::resolve(&online("0-7"), Some("app=6-7"), false).unwrap();
    assert_eq!(
        (l.cpuset(Slot::Loadgen), l.cpuset(Slot::App)),
        ("0".into(), "6-7".into())
    );
    assert!(
        layout::resolve(&online("0-3"), Some("app=1-2"), false)
            .unwrap_err()
            .0
            .contains("overlap db")
    );
    assert!(
        layout::resolve(&online("0-3"), Some("app=2-5"), false)
            .unwrap_err()
            .0
            .contains("cpu 4,5 of app is not online")
    );
    assert!(layout::resolve(&online("0-3"), Some("2-3"), false).is_err());
}

#[test]
fn reads_this_hosts_online_cpus() {
    let o = layout::online_cpus().unwrap();
    let n = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    assert!(o.len() >= n, "online {o} vs available parallelism {n}");
    assert!(o.contains(0) || !o.is_empty());
}

#[test]
fn cpuset_serializes_as_docker_list() {
    let l = layout::auto(&online("0-3")).unwrap();
    let v = serde_json::to_value(&l).unwrap();
    assert_eq!(v["app"], "2-3");
    let back: layout::CpuLayout = serde_json::from_value(v).unwrap();
    assert_eq!(back, l);
}
