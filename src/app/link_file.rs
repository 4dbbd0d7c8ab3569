//! The Link panel's *Load fitted link...*: a link file (`ackscope fit --out LINK.ron`) applied
//! to the window's link as a change of each link setting it alters.
//!
//! `link.file` itself cannot change during a run (it is one setting standing for many), so the
//! window reads the file as `--set link.file=` would ([`crate::params::link_file::apply_link_file`]:
//! each direction it holds over the current link, every value checked against the parameter
//! table) and then makes one ordinary change per setting that differs, as the sliders would: a
//! live run takes them at the current instant (recorded as `ParamChanged` events), a replay keeps
//! them as edits for the next run. A file that cannot be read or holds a bad value changes
//! nothing and shows the error, which names the file and the field.

use std::path::Path;

use ackscope_protocol::ParamChange;

use super::AppState;
use crate::params::link_file::{apply_link_file, LINK_FILE, LINK_TRACE};
use crate::params::Kind;

impl AppState {
    /// Loads the link file at `path` into the link (module doc).
    pub fn load_link_file(&mut self, path: &Path) {
        let mut next = self.scenario.clone();
        if let Err(e) = apply_link_file(&mut next, &path.display().to_string()) {
            self.error = Some(format!("Cannot load the link file: {e:#}"));
            return;
        }
        let Some(group) = self.catalog.group("link") else { return };
        let mut changes = Vec::new();
        for row in self.catalog.rows_of(group) {
            if matches!(row.kind, Kind::Path) || row.name == LINK_FILE || row.name == LINK_TRACE {
                continue;
            }
            for dir in ["link.a_to_b.", "link.b_to_a."] {
                let name = row.name.replacen("link.", dir, 1);
                match (self.scenario.value(&name), next.value(&name)) {
                    (Some(now), Some(new)) if now != new => changes.push(ParamChange::new(&name, new)),
                    _ => {}
                }
            }
        }
        let n = changes.len();
        for change in changes {
            self.set_param(change);
        }
        if self.error.is_none() {
            self.notice = Some(format!(
                "Loaded the link file {}: {n} link setting{} changed.",
                path.display(),
                if n == 1 { "" } else { "s" }
            ));
        }
    }
}
