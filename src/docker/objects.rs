//! Networks (and whether this host reaches their containers directly), volumes, and label-based
//! listing/cleanup of everything perflab created.
use super::engine::Docker;
use super::error::{DockerError, Result};
use bollard::models::{NetworkCreateRequest, VolumeCreateRequest};
use bollard::query_parameters::{
    ListContainersOptionsBuilder, ListNetworksOptionsBuilder, ListVolumesOptionsBuilder,
};
use std::collections::{BTreeMap, HashMap};

/// Label put on every object perflab creates (value `1`).
pub const LABEL_PERFLAB: &str = "perflab";
/// Label with the run id (a stack started by `up`, `smoke` or `run`).
pub const LABEL_RUN: &str = "perflab.run";
/// Label with the container's role (`pg`, `php-fpm`, `nginx`, `app`, `k6`, ...).
pub(crate) const LABEL_ROLE: &str = "perflab.role";
/// Label with the lab (`php`, `node`, `demo`).
pub(crate) const LABEL_LAB: &str = "perflab.lab";
/// Label on the marker volume of a stack handed to the user (`perflab up`, `smoke --keep`):
/// its owner exited on purpose, only `perflab down` removes it.
pub(crate) const LABEL_KEPT: &str = "perflab.kept";

/// The standard label set for an object of a run, with its owner (this process: see `owner`).
pub fn labels(run_id: &str, lab: &str, role: &str) -> BTreeMap<String, String> {
    let mut m = crate::owner::Owner::me().labels();
    m.insert(LABEL_PERFLAB.to_string(), "1".to_string());
    m.insert(LABEL_RUN.to_string(), run_id.to_string());
    m.insert(LABEL_LAB.to_string(), lab.to_string());
    m.insert(LABEL_ROLE.to_string(), role.to_string());
    m
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ObjectKind {
    Container,
    Network,
    Volume,
}

/// How this host reaches a network's containers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostAccess {
    /// The network's IPv4 gateway: the host's address on it, the source address containers
    /// see for the host's connections (and for docker-proxy's, through a published port).
    pub gateway: Option<String>,
    /// `Ok` when the host reaches the containers at their own addresses; else why not.
    pub direct: std::result::Result<(), String>,
}

/// A Docker object carrying the `perflab` label.
#[derive(Debug, Clone)]
pub struct LabelledObject {
    pub kind: ObjectKind,
    pub id: String,
    pub name: String,
    pub labels: BTreeMap<String, String>,
}

impl Docker {
    /// Create a private bridge network. Returns its id.
    pub async fn create_network(
        &self,
        name: &str,
        labels: &BTreeMap<String, String>,
    ) -> Result<String> {
        let req = NetworkCreateRequest {
            name: name.to_string(),
            driver: Some("bridge".into()),
            labels: Some(labels.clone().into_iter().collect()),
            ..Default::default()
        };
        let r = self
            .raw()
            .create_network(req)
            .await
            .map_err(|e| DockerError::api(format!("create network {name}"), e))?;
        Ok(r.id)
    }

    /// How this host reaches containers on network `name`: directly at their own addresses
    /// when the engine runs here and the network's bridge is an interface of this host's
    /// network namespace; not with Docker Desktop (a VM), rootless Docker (its own namespace)
    /// or an engine on another machine, where ports must be published.
    pub(crate) async fn host_access(&self, name: &str) -> Result<HostAccess> {
        let n = self
            .raw()
            .inspect_network(
                name,
                None::<bollard::query_parameters::InspectNetworkOptions>,
            )
            .await
            .map_err(|e| DockerError::api(format!("inspect network {name}"), e))?;
        let id = n.id.unwrap_or_default();
        let bridge = n
            .options
            .and_then(|o| o.get("com.docker.network.bridge.name").cloned())
            .unwrap_or_else(|| format!("br-{}", &id[..id.floor_char_boundary(12)]));
        let gateway = n
            .ipam
            .and_then(|i| i.config)
            .unwrap_or_default()
            .into_iter()
            .find_map(|c| {
                c.gateway
                    .filter(|g| g.parse::<std::net::Ipv4Addr>().is_ok())
            });
        let direct = if !self.endpoint().is_on_this_machine() {
            Err(format!(
                "the engine {} is not on this machine",
                self.endpoint()
            ))
        } else if gateway.is_none() {
            Err(format!("network {name} has no IPv4 gateway"))
        } else if !std::path::Path::new("/sys/class/net")
            .join(&bridge)
            .exists()
        {
            Err(format!(
                "its bridge {bridge} is not an interface of this host (Docker Desktop, rootless Docker or another network namespace)"
            ))
        } else {
            Ok(())
        };
        Ok(HostAccess { gateway, direct })
    }

    /// Whether a network with this name or id exists.
    pub async fn network_exists(&self, name: &str) -> Result<bool> {
        match self
            .raw()
            .inspect_network(
                name,
                None::<bollard::query_parameters::InspectNetworkOptions>,
            )
            .await
        {
            Ok(_) => Ok(true),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(false),
            Err(e) => Err(DockerError::api(format!("inspect network {name}"), e)),
        }
    }

    pub async fn remove_network(&self, name: &str) -> Result<()> {
        match self.raw().remove_network(name).await {
            Ok(()) => Ok(()),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(()),
            Err(e) => Err(DockerError::api(format!("remove network {name}"), e)),
        }
    }

    /// Create a named local volume.
    pub async fn create_volume(&self, name: &str, labels: &BTreeMap<String, String>) -> Result<()> {
        let req = VolumeCreateRequest {
            name: Some(name.to_string()),
            labels: Some(labels.clone().into_iter().collect()),
            ..Default::default()
        };
        self.raw()
            .create_volume(req)
            .await
            .map_err(|e| DockerError::api(format!("create volume {name}"), e))?;
        Ok(())
    }

    pub(crate) async fn remove_volume(&self, name: &str) -> Result<()> {
        match self
            .raw()
            .remove_volume(name, None::<bollard::query_parameters::RemoveVolumeOptions>)
            .await
        {
            Ok(()) => Ok(()),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(()),
            Err(e) => Err(DockerError::api(format!("remove volume {name}"), e)),
        }
    }

    /// Every container, network and volume whose labels match all of `filters`
    /// (`key` or `key=value`); the `perflab` and `perflab.run` labels are always required.
    pub async fn list_labelled(&self, filters: &[String]) -> Result<Vec<LabelledObject>> {
        // Both labels: containers inherit labels from their image, so a build step's container
        // from a perflab image may carry `perflab` but never a run id.
        let mut label_filters = vec![LABEL_PERFLAB.to_string(), LABEL_RUN.to_string()];
        label_filters.extend(filters.iter().cloned());
        let f: HashMap<String, Vec<String>> = HashMap::from([("label".to_string(), label_filters)]);
        let mut out = Vec::new();
        let cs = self
            .raw()
            .list_containers(Some(
                ListContainersOptionsBuilder::default()
                    .all(true)
                    .filters(&f)
                    .build(),
            ))
            .await
            .map_err(|e| DockerError::api("list containers", e))?;
        for c in cs {
            out.push(LabelledObject {
                kind: ObjectKind::Container,
                id: c.id.unwrap_or_default(),
                name: c
                    .names
                    .and_then(|n| n.into_iter().next())
                    .unwrap_or_default()
                    .trim_start_matches('/')
                    .to_string(),
                labels: c.labels.unwrap_or_default().into_iter().collect(),
            });
        }
        let ns = self
            .raw()
            .list_networks(Some(
                ListNetworksOptionsBuilder::default().filters(&f).build(),
            ))
            .await
            .map_err(|e| DockerError::api("list networks", e))?;
        for n in ns {
            out.push(LabelledObject {
                kind: ObjectKind::Network,
                id: n.id.unwrap_or_default(),
                name: n.name.unwrap_or_default(),
                labels: n.labels.unwrap_or_default().into_iter().collect(),
            });
        }
        let vs = self
            .raw()
            .list_volumes(Some(
                ListVolumesOptionsBuilder::default().filters(&f).build(),
            ))
            .await
            .map_err(|e| DockerError::api("list volumes", e))?;
        for v in vs.volumes.unwrap_or_default() {
            out.push(LabelledObject {
                kind: ObjectKind::Volume,
                id: v.name.clone(),
                name: v.name,
                labels: v.labels.into_iter().collect(),
            });
        }
        Ok(out)
    }

    /// [`Docker::remove_labelled`] until nothing matches: a create request sent just before an
    /// interrupt dropped its caller still completes on the engine, after a first pass listed
    /// the objects (then the network is busy, or a container appears). Passes 300 ms apart
    /// until one finds nothing, for up to 10 s; returns how many objects were removed, or the
    /// last error.
    pub(crate) async fn remove_labelled_settled(&self, filters: &[String]) -> Result<usize> {
        let t0 = std::time::Instant::now();
        let mut removed = 0;
        let mut passes = 0;
        loop {
            passes += 1;
            match self.remove_labelled(filters).await {
                // Nothing left 300 ms after an earlier pass: settled.
                Ok(v) if v.is_empty() && passes > 1 => return Ok(removed),
                Ok(v) => removed += v.len(),
                Err(e) if t0.elapsed() > std::time::Duration::from_secs(10) => return Err(e),
                Err(_) => {}
            }
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        }
    }

    /// Remove every labelled object matching `filters`: containers first, then networks and
    /// volumes. Returns what was removed.
    pub(crate) async fn remove_labelled(&self, filters: &[String]) -> Result<Vec<LabelledObject>> {
        let mut objs = self.list_labelled(filters).await?;
        objs.sort_by_key(|o| o.kind);
        for o in &objs {
            match o.kind {
                ObjectKind::Container => self.remove_container(&o.id).await?,
                ObjectKind::Network => self.remove_network(&o.id).await?,
                ObjectKind::Volume => self.remove_volume(&o.name).await?,
            }
        }
        Ok(objs)
    }
}
