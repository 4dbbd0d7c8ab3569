//! The files a scenario's link comes from, as far as they need the readers and writers above the
//! parameter table: `link.trace` (a recording replayed exactly, read by [`resolve`]) and the
//! link file that `ackscope fit --out` writes ([`write_link_file`]).
//!
//! `link.trace = FILE` stays in the scenario as a path ([`ackscope_protocol::LinkPair::trace`]);
//! [`resolve`] reads the file into the scenario's replay when a run starts (once: a trace read
//! for the same path is kept across clones and parameter changes). A session run over a trace
//! names it in its header, and re-running it reads the file again: an error names the file.
//! Setting either name, reading a link file into a scenario and refusing both during a run are
//! the parameter table's ([`crate::params::link_file`]), which every change by name goes through.

use std::path::Path;
use std::sync::Arc;

use ackscope_protocol::{LinkConfig, Replay, Scenario};
use anyhow::{anyhow, Context, Result};
use serde::Serialize;

use crate::capture::records;
use crate::params::link_file::LINK_TRACE;
use crate::report::export::atomic::AtomicFile;

/// What [`write_link_file`] writes.
pub use crate::params::link_file::LinkFile;

/// Reads the trace `link.trace` names into the scenario, unless it was read already.
pub fn resolve(scenario: &mut Scenario) -> Result<()> {
    let Some(path) = scenario.link.trace.clone() else {
        scenario.link.replay = Replay::default();
        return Ok(());
    };
    if scenario.link.replay.trace().is_some_and(|t| t.source == path) {
        return Ok(());
    }
    let p = Path::new(&path);
    let records =
        records::load(p).and_then(|r| r.require_fates(p)).map_err(|e| anyhow!("{LINK_TRACE} = {path}: {e:#}"))?;
    let mut trace = records.trace;
    trace.source = path;
    scenario.link.replay = Replay(Some(Arc::new(trace)));
    Ok(())
}

#[derive(Serialize)]
struct LinkFileOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    a_to_b: Option<&'a LinkConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    b_to_a: Option<&'a LinkConfig>,
}

/// Writes a link file to `path` (complete or not at all), `comment` as `//` lines above it;
/// its size.
pub fn write_link_file(path: &Path, file: &LinkFile, comment: &str) -> Result<u64> {
    let out = LinkFileOut { a_to_b: file.a_to_b.as_ref(), b_to_a: file.b_to_a.as_ref() };
    let body = ron::ser::to_string_pretty(&out, ron::ser::PrettyConfig::default())
        .map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let mut text: String = comment.lines().map(|l| format!("// {l}\n")).collect();
    text.push_str(&body);
    text.push('\n');
    let mut f = AtomicFile::create(path)?;
    std::io::Write::write_all(&mut f, text.as_bytes()).with_context(|| format!("{}: write failed", path.display()))?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ackscope_protocol::JitterDistribution;

    use crate::params::link_file::read_link_file;

    fn temp(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("ackscope-links-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn what_write_link_file_writes_reads_back() {
        let path = temp("written.ron");
        let c = LinkConfig { latency_ms: 42.5, jitter_ms: 3.0, ..LinkConfig::default() };
        write_link_file(&path, &LinkFile { a_to_b: Some(c), b_to_a: None }, "fitted\nby a test").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("// fitted\n// by a test\n"), "{text}");
        let back = read_link_file(&path, &Default::default()).unwrap();
        assert_eq!(back, LinkFile { a_to_b: Some(c), b_to_a: None });
    }

    #[test]
    fn a_link_file_can_hold_every_setting_of_the_link() {
        let path = temp("full.ron");
        let c = LinkConfig {
            latency_ms: 1.0,
            jitter_ms: 2.0,
            jitter_distribution: JitterDistribution::Normal,
            jitter_reorders: false,
            loss_percent: 3.0,
            burst: ackscope_protocol::BurstLoss { p_percent: 4.0, r_percent: 5.0, loss_in_bad_percent: 6.0 },
            duplicate_percent: 7.0,
            reorder_percent: 8.0,
            reorder_delay_ms: 9.0,
            bandwidth_kbps: 10.0,
            queue_bytes: 11_000,
            mtu_bytes: 1200,
        };
        // A field added to LinkConfig and not to the patch fails here (it would not read back).
        let fields = serde_json::to_value(c).unwrap().as_object().unwrap().len();
        assert_eq!(fields, 12, "LinkConfig has a field ConfigPatch does not");
        write_link_file(&path, &LinkFile { a_to_b: None, b_to_a: Some(c) }, "").unwrap();
        assert_eq!(read_link_file(&path, &Default::default()).unwrap().b_to_a, Some(c));
    }
}
