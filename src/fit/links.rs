//! The files a scenario's link can come from: `link.trace` (a recording replayed exactly) and
//! `link.file` (a fitted link, as `ackscope fit --out` writes it).
//!
//! - `link.trace = FILE` stays in the scenario as a path ([`ackscope_protocol::LinkPair::trace`]);
//!   [`resolve`] reads the file into the scenario's replay when a run starts (once: a trace read
//!   for the same path is kept across clones and parameter changes). A session run over a trace
//!   names it in its header, and re-running it reads the file again: an error names the file.
//! - `link.file = LINK.ron` is read when it is set ([`apply_link_file`]): each direction the file
//!   holds takes the values it holds, and keeps the scenario's for the rest, so the session header
//!   holds the link itself and a later `--set link.X` changes the fitted link further.
//!
//! Neither may change while a run goes on ([`refuse_during_run`]): the trace is read at the start,
//! and a link file is a set of ordinary `link.X` changes, which the window makes one by one.

use std::path::Path;
use std::sync::Arc;

use ackscope_protocol::{JitterDistribution, LinkConfig, Replay, Scenario};
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::capture::records;
use crate::params;
use crate::report::export::atomic::AtomicFile;
use crate::session::strict::{describe, ron_options};

/// The `--set` name of the fitted link file.
pub const LINK_FILE: &str = "link.file";
/// The `--set` name of the replayed trace.
pub const LINK_TRACE: &str = "link.trace";

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

/// Refuses a change of `link.trace` or `link.file` during a run (module doc).
pub fn refuse_during_run(name: &str) -> Result<()> {
    match name.trim() {
        LINK_TRACE => bail!("{LINK_TRACE} is read when a run starts and cannot change during it (set it with --set or in the scenario file)"),
        LINK_FILE => bail!("{LINK_FILE} cannot be applied during a run as one change: the window's Link panel loads a link file as a change of each link setting"),
        _ => Ok(()),
    }
}

/// The directions a link file holds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LinkFile {
    pub a_to_b: Option<LinkConfig>,
    pub b_to_a: Option<LinkConfig>,
}

/// One direction as a link file holds it: any of the link's settings (each left out keeps the
/// scenario's). Every field of [`LinkConfig`] is here (a test keeps it so).
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct ConfigPatch {
    latency_ms: Option<f64>,
    jitter_ms: Option<f64>,
    jitter_distribution: Option<JitterDistribution>,
    jitter_reorders: Option<bool>,
    loss_percent: Option<f64>,
    burst: Option<BurstPatch>,
    duplicate_percent: Option<f64>,
    reorder_percent: Option<f64>,
    reorder_delay_ms: Option<f64>,
    bandwidth_kbps: Option<f64>,
    queue_bytes: Option<u32>,
    mtu_bytes: Option<u32>,
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct BurstPatch {
    p_percent: Option<f64>,
    r_percent: Option<f64>,
    loss_in_bad_percent: Option<f64>,
}

impl ConfigPatch {
    fn apply(self, c: &mut LinkConfig) {
        fn set<T>(field: &mut T, v: Option<T>) {
            if let Some(v) = v {
                *field = v;
            }
        }
        set(&mut c.latency_ms, self.latency_ms);
        set(&mut c.jitter_ms, self.jitter_ms);
        set(&mut c.jitter_distribution, self.jitter_distribution);
        set(&mut c.jitter_reorders, self.jitter_reorders);
        set(&mut c.loss_percent, self.loss_percent);
        if let Some(b) = self.burst {
            set(&mut c.burst.p_percent, b.p_percent);
            set(&mut c.burst.r_percent, b.r_percent);
            set(&mut c.burst.loss_in_bad_percent, b.loss_in_bad_percent);
        }
        set(&mut c.duplicate_percent, self.duplicate_percent);
        set(&mut c.reorder_percent, self.reorder_percent);
        set(&mut c.reorder_delay_ms, self.reorder_delay_ms);
        set(&mut c.bandwidth_kbps, self.bandwidth_kbps);
        set(&mut c.queue_bytes, self.queue_bytes);
        set(&mut c.mtu_bytes, self.mtu_bytes);
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FilePatch {
    a_to_b: Option<ConfigPatch>,
    b_to_a: Option<ConfigPatch>,
}

/// Reads `path` as a link file, each direction's values over `base`'s (the scenario's link).
pub fn read_link_file(path: &Path, base: &ackscope_protocol::LinkPair) -> Result<LinkFile> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {origin}"))?;
    let patch: FilePatch = ron_options().from_str(&text).map_err(|e| anyhow!("{origin}: {}", describe(&text, &e)))?;
    let on = |p: Option<ConfigPatch>, base: &LinkConfig| {
        p.map(|p| {
            let mut c = *base;
            p.apply(&mut c);
            c
        })
    };
    Ok(LinkFile { a_to_b: on(patch.a_to_b, &base.a_to_b), b_to_a: on(patch.b_to_a, &base.b_to_a) })
}

/// `--set link.file=PATH`: applies the link file's directions to `scenario`, each value held to
/// the parameter table's range; the scenario is unchanged on error.
pub fn apply_link_file(scenario: &mut Scenario, path: &str) -> Result<()> {
    if path.is_empty() || path == "null" {
        bail!("{LINK_FILE} takes the path of a link file (`ackscope fit CAPTURE --out LINK.ron` writes one)");
    }
    let file = read_link_file(Path::new(path), &scenario.link).map_err(|e| anyhow!("{LINK_FILE} = {e:#}"))?;
    if file.a_to_b.is_none() && file.b_to_a.is_none() {
        bail!("{LINK_FILE} = {path}: the file holds neither a_to_b nor b_to_a");
    }
    let mut next = scenario.clone();
    if let Some(c) = file.a_to_b {
        next.link.a_to_b = c;
    }
    if let Some(c) = file.b_to_a {
        next.link.b_to_a = c;
    }
    params::validate::scenario(&next).map_err(|e| anyhow!("{LINK_FILE} = {path}: {e:#}"))?;
    *scenario = next;
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

    fn temp(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("ackscope-links-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn a_link_file_sets_what_it_holds_and_keeps_the_rest() {
        let path = temp("partial.ron");
        std::fs::write(&path, "// a comment\n(a_to_b: (latency_ms: 80.0, burst: (p_percent: 1.0)))\n").unwrap();
        let mut s = Scenario::default();
        s.set("link.reorder_percent", "3").unwrap();
        apply_link_file(&mut s, path.to_str().unwrap()).unwrap();
        assert_eq!(s.link.a_to_b.latency_ms, 80.0);
        assert_eq!(s.link.a_to_b.burst.p_percent, 1.0);
        assert_eq!(s.link.a_to_b.burst.r_percent, 25.0, "the burst's other fields stay");
        assert_eq!(s.link.a_to_b.reorder_percent, 3.0, "values the file does not hold stay");
        let want = LinkConfig { reorder_percent: 3.0, ..LinkConfig::default() };
        assert_eq!(s.link.b_to_a, want, "a direction the file leaves out stays");
    }

    #[test]
    fn bad_link_files_are_refused_naming_the_file_and_the_setting() {
        let mut s = Scenario::default();
        let before = s.clone();
        let e = format!("{:#}", apply_link_file(&mut s, "/nonexistent/fit.ron").unwrap_err());
        assert!(e.contains("/nonexistent/fit.ron"), "{e}");
        let path = temp("typo.ron");
        std::fs::write(&path, "(a_to_b: (latency_msec: 80.0))").unwrap();
        let e = format!("{:#}", apply_link_file(&mut s, path.to_str().unwrap()).unwrap_err());
        assert!(e.contains("typo.ron") && e.contains("latency_msec"), "{e}");
        std::fs::write(&path, "(b_to_a: (loss_percent: 250.0))").unwrap();
        let e = format!("{:#}", apply_link_file(&mut s, path.to_str().unwrap()).unwrap_err());
        assert!(e.contains("typo.ron") && e.contains("loss_percent") && e.contains("100"), "{e}");
        std::fs::write(&path, "(sideways: ())").unwrap();
        assert!(apply_link_file(&mut s, path.to_str().unwrap()).is_err());
        assert_eq!(s, before, "a refused file changes nothing");
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

    #[test]
    fn neither_file_setting_may_change_during_a_run() {
        assert!(refuse_during_run("link.trace").is_err());
        assert!(refuse_during_run(" link.file").is_err());
        assert!(refuse_during_run("link.loss_percent").is_ok());
    }
}
