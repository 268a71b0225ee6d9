//! Where `compare EXP --aa` records what it learned of the host, and where a later comparison
//! finds it: `<out>/calibration/<experiment>.json` (`verify::compare::calibration`), written
//! atomically, read back through the bounded reader, cited only on the host that made it.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::host::HostFacts;
use crate::rundir::read::{self, FileKind, RunFile};
use crate::verify::compare::calibration::{self, Calibration, HostKey};
use crate::verify::matrix::Matrix;

/// The folder under `--out`.
pub(crate) const DIR: &str = "calibration";

fn file(out: &Path, experiment: &str) -> PathBuf {
    out.join(DIR).join(format!("{experiment}.json"))
}

/// `--aa`: each row's calibration into the row and onto disk; `batches`: each experiment's
/// batch id; `configuration`: what both sides ran. The files written, as lines to say.
pub(crate) fn record(
    out: &Path,
    m: &mut Matrix,
    batches: &BTreeMap<String, String>,
    configuration: &str,
) -> anyhow::Result<Vec<String>> {
    let host = HostKey::of(&HostFacts::collect());
    let mut said = Vec::new();
    for row in &mut m.rows {
        let (Some(c), Some(batch)) = (&row.comparison, batches.get(&row.experiment)) else {
            continue;
        };
        let Some(cal) = calibration::of(c, (&row.experiment, batch, configuration), host.clone())
        else {
            said.push(format!(
                "{}: no calibration (no paired CPU signal over 2 pairs or more)",
                row.experiment
            ));
            continue;
        };
        let path = file(out, &row.experiment);
        let dir = out.join(DIR);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let text = serde_json::to_string_pretty(&cal)?;
        crate::atomic::write_atomic(&path, text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        said.push(format!("{} -> {}", cal.citation(), path.display()));
        row.calibration = Some(cal);
    }
    Ok(said)
}

/// Each row's recorded calibration, when one was made on this host.
pub(crate) fn cite(out: &Path, m: &mut Matrix) {
    let host = HostKey::of(&HostFacts::collect());
    for row in &mut m.rows {
        row.calibration = read(out, &row.experiment).filter(|c| c.host == host);
    }
}

/// The recorded calibration of `experiment` under `out`, if one reads (a hostile or torn file
/// is no calibration).
pub(crate) fn read(out: &Path, experiment: &str) -> Option<Calibration> {
    let f = RunFile::loose(&file(out, experiment), FileKind::Status);
    let doc = read::doc(&f).ok()?;
    serde_json::from_str(&doc.text).ok()
}
