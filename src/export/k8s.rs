//! `perflab export k8s EXP --dir DIR`: the experiment as Kubernetes manifests, for k6-operator
//! users. The load is a k6-operator `TestRun` (k6.io/v1alpha1): `--generators N` is its
//! `parallelism` (k6-operator splits the schedule with the same execution segments), `separate`
//! puts each runner on its own node, the script is the run's own (`labs/k6/<script>` in a
//! ConfigMap) with the run's environment (the plan's steps, SLOs, VUs, tags), and the runner
//! gets integer CPUs with requests equal to limits. The lab is one Indexed Job per CPU slot of
//! the layout (`db`, `app`: containers that share a socket volume share a pod), every
//! container Guaranteed with integer CPU requests equal to limits (exclusive cores under the
//! static CPU manager), and a Service per published port under the role's name (`pg`,
//! `nginx`, `app`), so the containers find each other as they do on a Docker network. Pure:
//! the caller writes the files.
use crate::experiment::Experiment;
use crate::lab::{ContainerDecl, Publish, StartContext};
use crate::plan::{Plan, Slot};
use serde_json::{Value, json};

/// What the export is asked.
pub(crate) struct Export<'a> {
    pub experiment: &'a Experiment,
    pub plan: &'a Plan,
    /// k6 runners (`--generators`).
    pub generators: u32,
    /// Whole CPUs per slot (requests = limits).
    pub cpus: [(Slot, u32); 3],
    /// Image names: `<registry>/<image>:<suite>`.
    pub registry: String,
    pub suite: String,
    /// The k6 script's text.
    pub script_text: String,
    /// Passwords the lab's containers are rendered with.
    pub ctx: StartContext,
}

/// One file of the export: its name in `--dir` and its YAML.
pub(crate) type File = (String, String);

fn cpus_of(e: &Export, s: Slot) -> u32 {
    e.cpus
        .iter()
        .find(|(x, _)| *x == s)
        .map_or(1, |(_, n)| *n)
        .max(1)
}

fn name(e: &Export, what: &str) -> String {
    format!("perflab-{}-{what}", e.experiment.id).to_lowercase()
}

fn labels(e: &Export, role: &str) -> Value {
    json!({
        "app.kubernetes.io/name": "perflab",
        "perflab/experiment": e.experiment.id,
        "perflab/role": role,
    })
}

fn resources(cpu: u32, memory_mib: i64) -> Value {
    let r = json!({"cpu": cpu.to_string(), "memory": format!("{memory_mib}Mi")});
    json!({"requests": r, "limits": r})
}

fn image(e: &Export, c: &ContainerDecl) -> String {
    format!("{}/{}:{}", e.registry, c.role.image_name(), e.suite)
}

/// The k6 runners' environment: the plan's k6 environment with the entry Service as target.
fn k6_env(e: &Export, entry: &str) -> Value {
    let inv = crate::load::invocation(e.plan, entry);
    let env: Vec<Value> = inv
        .env
        .iter()
        .map(|(k, v)| json!({"name": k, "value": v}))
        .collect();
    Value::Array(env)
}

/// `TestRun` arguments: the run's k6 flags, less those the operator sets (the API address, the
/// paused start, the script path) and the files that stay in each runner (`--out csv=`, the
/// summary export: collect them from the runners, see docs/scale-out.md).
fn k6_arguments(e: &Export, entry: &str) -> String {
    let inv = crate::load::invocation(e.plan, entry);
    inv.args
        .iter()
        .filter(|a| {
            *a != "run"
                && *a != "--paused"
                && !a.starts_with("--address=")
                && !a.starts_with(crate::load::SCRIPTS_DIR)
        })
        .map(|a| a.replace(crate::load::OUT_DIR, "/home/k6"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The manifests of `e`: ConfigMaps, Services, Jobs, the TestRun (file name, YAML).
pub(crate) fn manifests(e: &Export) -> Result<Vec<File>, String> {
    let d = crate::lab::descriptor(e.experiment.lab);
    let containers = d.containers(&e.experiment.stack, &e.ctx)?;
    let mut files = Vec::new();
    let mut entry = None;
    for slot in [Slot::Db, Slot::App] {
        let pod: Vec<&ContainerDecl> = containers
            .iter()
            .filter(|c| c.role.slot() == slot)
            .collect();
        if pod.is_empty() {
            continue;
        }
        let role = match slot {
            Slot::Db => "db",
            _ => "app",
        };
        for c in &pod {
            let (port, is_entry) = match c.publish {
                Some(Publish::Entry(p)) => (p, true),
                Some(Publish::Database(p)) => (p, false),
                None => continue,
            };
            let svc = c.role.log_name().to_string();
            if is_entry {
                entry = Some(format!("http://{svc}:{port}"));
            }
            files.push((
                format!("service-{svc}.yaml"),
                yaml(&service(e, &svc, role, port)),
            ));
        }
        let (job, config) = job(e, role, slot, &pod, d.info().volume);
        if let Some(cm) = config {
            files.push((format!("configmap-{role}-files.yaml"), yaml(&cm)));
        }
        files.push((format!("job-{role}.yaml"), yaml(&job)));
    }
    let entry = entry.ok_or("the lab publishes no entry point")?;
    let script = crate::load::invocation(e.plan, &entry).script;
    files.push((
        "configmap-k6-script.yaml".into(),
        yaml(&json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name(e, "k6-script"), "labels": labels(e, "loadgen")},
            "data": {script: e.script_text},
        })),
    ));
    files.push(("testrun.yaml".into(), yaml(&testrun(e, script, &entry))));
    Ok(files)
}

fn testrun(e: &Export, script: &str, entry: &str) -> Value {
    json!({
        "apiVersion": "k6.io/v1alpha1",
        "kind": "TestRun",
        "metadata": {"name": name(e, "load"), "labels": labels(e, "loadgen")},
        "spec": {
            "parallelism": e.generators,
            "separate": true,
            "script": {"configMap": {"name": name(e, "k6-script"), "file": script}},
            "arguments": k6_arguments(e, entry),
            "runner": {
                "image": format!("{}/k6:{}", e.registry, e.suite),
                "env": k6_env(e, entry),
                "resources": resources(cpus_of(e, Slot::Loadgen), 1024),
                "metadata": {"labels": labels(e, "loadgen")},
            },
        },
    })
}

fn service(e: &Export, svc: &str, role: &str, port: u16) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": svc, "labels": labels(e, role)},
        "spec": {
            "selector": {"perflab/experiment": e.experiment.id, "perflab/role": role},
            "ports": [{"name": format!("p{port}"), "port": port, "targetPort": port}],
        },
    })
}

/// The Indexed Job of one slot's pod, and the ConfigMap of its containers' files.
fn job(
    e: &Export,
    role: &str,
    slot: Slot,
    pod: &[&ContainerDecl],
    volume: Option<crate::lab::VolumeDecl>,
) -> (Value, Option<Value>) {
    let cm_name = name(e, &format!("{role}-files"));
    let (mut data, mut containers, mut volumes) = (serde_json::Map::new(), Vec::new(), Vec::new());
    for c in pod {
        // the lab's process gets the slot's CPUs; the entry in front of it in the same pod
        // (nginx before php-fpm) one
        let front = pod.len() > 1 && matches!(c.publish, Some(Publish::Entry(_)));
        let cpu = if front { 1 } else { cpus_of(e, slot) };
        let mut mounts = Vec::new();
        for (j, f) in c.files.iter().enumerate() {
            let key = format!("{}-{j}", c.role.log_name());
            data.insert(
                key.clone(),
                Value::String(String::from_utf8_lossy(&f.contents).into_owned()),
            );
            mounts.push(json!({"name": "files", "mountPath": f.path, "subPath": key}));
        }
        if let (true, Some(v)) = (c.shared_volume, volume) {
            mounts.push(json!({"name": "shared", "mountPath": v.target}));
        }
        let mut k = json!({
            "name": c.role.log_name(),
            "image": image(e, c),
            "env": c.env.iter().map(|(k, v)| json!({"name": k, "value": v})).collect::<Vec<_>>(),
            "resources": resources(cpu, c.memory_mib),
            "volumeMounts": mounts,
        });
        if let Some(cmd) = &c.cmd {
            k["args"] = json!(cmd);
        }
        containers.push(k);
    }
    if !data.is_empty() {
        volumes.push(json!({"name": "files", "configMap": {"name": cm_name}}));
    }
    if pod.iter().any(|c| c.shared_volume) {
        volumes.push(json!({"name": "shared", "emptyDir": {}}));
    }
    let names: Vec<&str> = pod.iter().map(|c| c.role.log_name()).collect();
    let job = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name(e, role), "labels": labels(e, role)},
        "spec": {
            "completionMode": "Indexed",
            "completions": 1,
            "parallelism": 1,
            "backoffLimit": 0,
            "template": {
                "metadata": {"labels": labels(e, role)},
                "spec": {
                    "restartPolicy": "Never",
                    "hostAliases": [{"ip": "127.0.0.1", "hostnames": names}],
                    "containers": containers,
                    "volumes": volumes,
                },
            },
        },
    });
    let cm = (!data.is_empty()).then(|| {
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": cm_name, "labels": labels(e, role)},
            "data": data,
        })
    });
    (job, cm)
}

fn yaml(v: &Value) -> String {
    serde_yaml::to_string(v).expect("a JSON value serializes as YAML")
}
