//! The two `link.X` settings that name a file, and reading a link file into a scenario.
//!
//! - `link.trace = FILE` stays in the scenario as a path ([`ackscope_protocol::LinkPair::trace`]);
//!   the app reads the file into the scenario's replay when a run starts
//!   (`crate::fit::links::resolve`, which needs the capture and session readers above this table).
//! - `link.file = LINK.ron` is read when it is set ([`apply_link_file`], which [`super::apply`]
//!   calls for that name): each direction the file holds takes the values it holds, and keeps the
//!   scenario's for the rest, so the session header holds the link itself and a later
//!   `--set link.X` changes the fitted link further. `ackscope fit --out` writes such a file
//!   (`crate::fit::links::write_link_file`).
//!
//! Neither may change while a run goes on ([`super::refuse_during_run`]): the trace is read at the start,
//! and a link file is a set of ordinary `link.X` changes, which the window makes one by one. Both
//! live here, beside the table that checks every value, so applying a change by name never has
//! to reach up into the fitting and capture code.

use std::path::Path;

use ackscope_protocol::{JitterDistribution, LinkConfig, Scenario};
use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;

use super::strict::{describe, ron_options};

/// The `--set` name of the fitted link file.
pub const LINK_FILE: &str = "link.file";
/// The `--set` name of the replayed trace.
pub const LINK_TRACE: &str = "link.trace";

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
    super::validate::scenario(&next).map_err(|e| anyhow!("{LINK_FILE} = {path}: {e:#}"))?;
    *scenario = next;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("ackscope-link-file-{}", std::process::id()));
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
}
