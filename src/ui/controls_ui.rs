//! The left panel: every parameter of the catalog as a control, in the groups of the parameter
//! table ([`crate::params::Catalog`]), and the actions that act on the running simulation.
//!
//! Nothing here lists a parameter or matches on a strategy: a control is built from its table
//! row (label, range, tooltip, and its [`Kind`]: a slider, a checkbox, a choice, an optional
//! number) under its dotted `--set` name, and *Strategy parameters* holds one group per strategy
//! the catalog's registry rows name (`StrategyInfo::settings`), headed in the strategy's colour.
//! A strategy with a registry row and a group of parameters therefore gets its controls with no
//! edit here. An edit is pushed as a typed [`AppCommand::SetParam`] once the user lets go
//! ([`super::edit`]), so it is applied live, recorded in the session, and re-applied identically
//! on a re-run.
//!
//! Live, the panel shows the values in force now. In replay it shows the values in force at the
//! cursor: the recording's scenario with every change recorded up to the cursor (live edits and
//! scripted link steps alike, as `ParamChanged` events). Edits made in replay cannot change the
//! recording; they set up the next Restart, which the panel says, listing them.

use ackscope_protocol::{ParamChange, ParamValue, Scenario, Side};

use super::colors::rgb_for;
use super::edit::Preview;
use crate::app::{AppCommand, AppState, PromptKind};
use crate::model::{Recording, Sample};
use crate::params::{self, false_acks, Catalog, Group, Kind, Param};

/// Which link direction the link group edits ("both" keeps them equal).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LinkDir {
    #[default]
    Both,
    AtoB,
    BtoA,
}

impl LinkDir {
    /// The name a link row has under this choice (`link.X`, `link.a_to_b.X`...).
    fn name(self, row: &str) -> String {
        match self {
            LinkDir::Both => row.to_string(),
            LinkDir::AtoB => row.replacen("link.", "link.a_to_b.", 1),
            LinkDir::BtoA => row.replacen("link.", "link.b_to_a.", 1),
        }
    }
}

/// The left panel's own state.
#[derive(Debug, Default)]
pub struct ControlsView {
    pub link_dir: LinkDir,
    /// The value a control shows while it is being changed.
    pub preview: Preview,
    /// The values in force at the cursor in replay, and what they were computed for.
    at_cursor: Option<(AtKey, Scenario)>,
}

/// What the values at the cursor depend on: the recording, the changes up to the cursor, and
/// the edits made since.
type AtKey = (u64, usize, usize);

/// Where a control's change goes, what it shows, and the preview of a change not yet let go.
struct Ctl<'a> {
    cmds: &'a mut Vec<AppCommand>,
    preview: &'a mut Preview,
    /// The values shown, by dotted name.
    values: &'a Scenario,
}

impl Ctl<'_> {
    fn set(&mut self, name: &str, value: ParamValue) {
        self.cmds.push(AppCommand::SetParam(ParamChange::new(name, value)));
    }

    /// The value of `name`; `None` for a name the scenario does not hold (a row of a catalog
    /// with more parameters than the scenario, as a test's is).
    fn value(&self, name: &str) -> Option<ParamValue> {
        self.values.value(name)
    }

    /// The control of `row` under the name `name` (`row.name`, or a link row's direction).
    fn param_ui(&mut self, ui: &mut egui::Ui, row: &Param, name: &str) {
        match row.kind {
            Kind::Number { min, max, integer, log } => self.slider_ui(ui, row, name, (min, max), integer, log),
            Kind::OptionalNumber { min, max } => self.optional_ui(ui, row, name, (min, max)),
            Kind::Bool => self.checkbox_ui(ui, row, name),
            Kind::Choice(names) => self.choice_ui(ui, row, name, &names()),
            Kind::AnyInteger => self.whole_ui(ui, row, name),
            Kind::Path => self.path_ui(ui, row),
        }
        if row.name == false_acks::ACK_EXPIRY && self.value(name).and_then(|v| v.as_f64()) == Some(0.0) {
            let warn = ui.visuals().warn_fg_color;
            ui.colored_label(warn, "warning: 0 = acks never expire, false acks after a wrap")
                .on_hover_text(false_acks::WHY);
        }
    }

    /// A file path (`link.trace`, `link.file`), shown, not edited: it is read when a run starts
    /// or when set, never as a live change (`--set` or the scenario file names it).
    fn path_ui(&mut self, ui: &mut egui::Ui, row: &Param) {
        let shown = match self.value(row.name) {
            Some(ParamValue::Name(path)) => path,
            _ => "none".to_string(),
        };
        ui.label(format!("{}: {shown}", row.label)).on_hover_text(row.tip);
    }

    /// A slider; commits once on release.
    fn slider_ui(
        &mut self,
        ui: &mut egui::Ui,
        row: &Param,
        name: &str,
        (min, max): (f64, f64),
        integer: bool,
        log: bool,
    ) {
        let model = self.value(name).and_then(|v| v.as_f64()).unwrap_or(min);
        let mut v = self.preview.shown(name, model);
        let mut slider =
            egui::Slider::new(&mut v, min..=max).logarithmic(log).text(row.label).update_while_editing(false);
        if integer {
            slider = slider.integer();
        } else if log {
            // A logarithmic range from 0 would otherwise show the step near 0 ("0.000000").
            slider = slider.max_decimals(2);
        }
        let r = ui.add(slider).on_hover_text(row.tip);
        if let Some(v) = self.preview.commit_on_release(ui, &r, name, v, model) {
            self.set(name, ParamValue::number(if integer { v.round() } else { v }));
        }
    }

    /// A number that may be unset: a checkbox sets or unsets it, a number field beside it
    /// (committing on release) gives its value.
    fn optional_ui(&mut self, ui: &mut egui::Ui, row: &Param, name: &str, (min, max): (f64, f64)) {
        let model = self.value(name).and_then(|v| v.as_f64());
        ui.horizontal(|ui| {
            let mut on = model.is_some();
            if ui.checkbox(&mut on, row.label).on_hover_text(row.tip).changed() {
                self.set(name, if on { ParamValue::number(min) } else { ParamValue::Unset });
            }
            if let Some(model) = model {
                let mut v = self.preview.shown(name, model);
                let field = egui::DragValue::new(&mut v).range(min..=max).suffix(format!(" {}", row.unit));
                let r = ui.add(field.update_while_editing(false)).on_hover_text(row.tip);
                if let Some(v) = self.preview.commit_on_release(ui, &r, name, v, model) {
                    self.set(name, ParamValue::number(v));
                }
            }
        });
    }

    /// A checkbox (a click is one change).
    fn checkbox_ui(&mut self, ui: &mut egui::Ui, row: &Param, name: &str) {
        let mut v = matches!(self.value(name), Some(ParamValue::Bool(true)));
        if ui.checkbox(&mut v, row.label).on_hover_text(row.tip).changed() {
            self.set(name, ParamValue::Bool(v));
        }
    }

    /// One of the row's names (a pick is one change).
    fn choice_ui(&mut self, ui: &mut egui::Ui, row: &Param, name: &str, names: &[&'static str]) {
        let current = self.value(name).map(|v| v.to_string()).unwrap_or_default();
        ui.horizontal(|ui| {
            let label = ui.label(row.label).on_hover_text(row.tip).id;
            let mut picked = None;
            egui::ComboBox::from_id_salt(name)
                .selected_text(current.as_str())
                .show_ui(ui, |ui| {
                    for n in names {
                        if ui.selectable_label(current == *n, *n).clicked() && current != *n {
                            picked = Some(*n);
                        }
                    }
                })
                .response
                .labelled_by(label)
                .on_hover_text(row.tip);
            if let Some(n) = picked {
                self.set(name, ParamValue::Name(n.to_string()));
            }
        });
    }

    /// Any whole number (the seed): a number field committing on release.
    fn whole_ui(&mut self, ui: &mut egui::Ui, row: &Param, name: &str) {
        let model = self.value(name).and_then(|v| v.as_f64()).unwrap_or(0.0);
        ui.horizontal(|ui| {
            let label = ui.label(row.label).on_hover_text(row.tip).id;
            let mut v = self.preview.shown(name, model);
            let r = ui.add(egui::DragValue::new(&mut v).max_decimals(0).update_while_editing(false)).labelled_by(label);
            if let Some(v) = self.preview.commit_on_release(ui, &r, name, v, model) {
                self.set(name, ParamValue::number(v.round()));
            }
        });
    }

    /// Every row of `group` but those in `skip`.
    fn group_ui(&mut self, ui: &mut egui::Ui, catalog: &Catalog, group: &Group, skip: &[&str]) {
        for row in catalog.rows_of(group).filter(|r| !skip.contains(&r.name)) {
            self.param_ui(ui, row, row.name);
        }
    }
}

/// The values in force at the cursor of `lane`: its scenario, every change recorded up to the
/// cursor, then `edits`; cached in `slot` until one of those moves.
fn values_at<'a>(
    lane: &Recording,
    cursor_s: f64,
    edits: &[ParamChange],
    slot: &'a mut Option<(AtKey, Scenario)>,
) -> &'a Scenario {
    let changes = &lane.store.changes;
    let upto = changes.partition_point(|(t, _)| *t <= cursor_s);
    let key = (lane.id(), upto, edits.len());
    if slot.as_ref().is_none_or(|(k, _)| *k != key) {
        let mut s = lane.shown_settings_at(cursor_s).unwrap_or_default();
        for change in edits {
            let _ = params::apply(&mut s, change);
        }
        *slot = Some((key, s));
    }
    &slot.as_ref().expect("just filled").1
}

/// The link group for one direction or both.
fn link_ui(catalog: &Catalog, dir: &mut LinkDir, ui: &mut egui::Ui, ctl: &mut Ctl) {
    ui.horizontal(|ui| {
        ui.selectable_value(dir, LinkDir::Both, "both").on_hover_text("Edit both directions together");
        ui.selectable_value(dir, LinkDir::AtoB, "A->B").on_hover_text("Edit the A->B direction only");
        ui.selectable_value(dir, LinkDir::BtoA, "B->A").on_hover_text("Edit the B->A direction only");
    });
    let Some(group) = catalog.group("link") else { return };
    for row in catalog.rows_of(group) {
        ctl.param_ui(ui, row, &dir.name(row.name));
    }
    link_file_ui(ui, ctl);
}

/// Loading a fitted link file (`ackscope fit --out LINK.ron`) into both directions: a native
/// dialog, or the window's path field (typed, or where no dialog can be shown). The app reads
/// the file and makes a change per setting it alters ([`crate::app::AppState::load_link_file`]).
fn link_file_ui(ui: &mut egui::Ui, ctl: &mut Ctl) {
    ui.horizontal(|ui| {
        let tip = "Set the link from a link file that `ackscope fit CAPTURE --out LINK.ron` wrote: each setting \
                   it holds changes (both directions it holds), the rest stay. A bad file changes nothing.";
        if ui.button("Load fitted link...").on_hover_text(tip).clicked() {
            ctl.cmds.push(AppCommand::LoadLinkDialog);
        }
        if ui.button("path...").on_hover_text("Type the link file's path instead").clicked() {
            ctl.cmds.push(AppCommand::OpenPrompt(PromptKind::LinkFile));
        }
    });
}

/// One group per strategy's own settings, in the catalog's group order, headed by the group's
/// label in the colour of the strategy that owns it; a group of a strategy that runs now is open.
fn strategies_ui(state: &AppState, ui: &mut egui::Ui, ctl: &mut Ctl) {
    let catalog = &state.catalog;
    let running: Vec<&str> =
        [Some(state.scenario.strategy.name()), state.ab.map(|s| s.name())].into_iter().flatten().collect();
    for group in &catalog.groups {
        let owners: Vec<_> = catalog.strategies_of(group).collect();
        let Some(first) = owners.first() else { continue };
        let colour = rgb_for(ui, first.colour);
        let heading = egui::RichText::new(group.label).color(colour);
        let labels: Vec<&str> = owners.iter().map(|s| s.label).collect();
        let open = owners.iter().any(|s| running.contains(&s.name));
        egui::CollapsingHeader::new(heading)
            .id_salt(("strategy group", group.prefix))
            .default_open(open)
            .show(ui, |ui| ctl.group_ui(ui, catalog, group, &[]))
            .header_response
            .on_hover_text(format!("The settings of {}", labels.join(" and ")));
    }
}

/// The workload: *Send burst* and *Send chunk* first (actions, kept in view at 1280x800), then
/// every workload parameter.
fn workload_ui(state: &AppState, ui: &mut egui::Ui, ctl: &mut Ctl) {
    let live = state.is_live();
    let why = "Only while a run is live (Restart to start one)";
    ui.horizontal(|ui| {
        if ui
            .add_enabled(live, egui::Button::new("Send burst"))
            .on_hover_text("Queue a burst of reliable messages on A (exercises the send queue and receive window)")
            .on_disabled_hover_text(why)
            .clicked()
        {
            ctl.cmds.push(AppCommand::Burst);
        }
        let model = state.chunk_kib as f64;
        let mut kib = ctl.preview.shown("chunk_kib", model);
        let r = ui.add(
            egui::DragValue::new(&mut kib)
                .range(1.0..=256.0)
                .max_decimals(0)
                .suffix(" KiB")
                .update_while_editing(false),
        );
        if let Some(k) = ctl.preview.commit_on_release(ui, &r, "chunk_kib", kib, model) {
            ctl.cmds.push(AppCommand::SetChunkKib(k.round().clamp(1.0, 256.0) as u32));
        }
        if ui
            .add_enabled(live, egui::Button::new("Send chunk"))
            .on_hover_text("Queue one large block on A (Chunks / Fragments strategies)")
            .on_disabled_hover_text(why)
            .clicked()
        {
            ctl.cmds.push(AppCommand::SendChunk);
        }
    });
    if let Some(group) = state.catalog.group("workload") {
        ctl.group_ui(ui, &state.catalog, group, &[]);
    }
}

/// In replay: what the panel shows, and where edits go.
fn replay_note_ui(state: &AppState, ui: &mut egui::Ui) {
    egui::Frame::new().fill(ui.visuals().faint_bg_color).inner_margin(6.0).corner_radius(4.0).show(ui, |ui| {
        ui.set_width(ui.available_width());
        ui.label(egui::RichText::new("Replay (read-only)").strong());
        ui.label(format!("Values in force at the cursor, {:.2} s.", state.cursor().as_secs_f64()));
        if state.replay_edits.is_empty() {
            ui.weak("Edits here do not change the recording: they set up the next Restart.");
        } else {
            let edits: Vec<String> = state.replay_edits.iter().map(ToString::to_string).collect();
            ui.label(
                egui::RichText::new(format!("For the next Restart: {}", edits.join(", ")))
                    .color(ui.visuals().warn_fg_color),
            );
        }
    });
}

/// The rows the top group shows elsewhere: the strategy has the top bar's menu, the send rate
/// heads flow control.
const PLACED_ELSEWHERE: [&str; 2] = ["strategy", "send_rate_pps"];

/// The groups with a section of their own here (the top level's is *Run*, the strategies' are
/// under *Strategy parameters*).
const OWN_SECTIONS: [&str; 4] = ["", "link", "flow", "workload"];

pub fn controls_ui(state: &AppState, view: &mut ControlsView, ui: &mut egui::Ui, cmds: &mut Vec<AppCommand>) {
    let shown: Scenario = match state.lanes.first() {
        Some(lane) if !state.is_live() && (lane.scenario.is_some() || lane.conditions.is_some()) => {
            replay_note_ui(state, ui);
            values_at(lane, state.cursor().as_secs_f64(), &state.replay_edits, &mut view.at_cursor).clone()
        }
        _ => state.scenario.clone(),
    };
    let catalog = &state.catalog;
    let mut ctl = Ctl { cmds, preview: &mut view.preview, values: &shown };
    let dir = &mut view.link_dir;
    egui::CollapsingHeader::new("Link").default_open(true).show(ui, |ui| link_ui(catalog, dir, ui, &mut ctl));
    egui::CollapsingHeader::new("Send rate and flow control").default_open(true).show(ui, |ui| {
        if let Some(rate) = catalog.find("send_rate_pps") {
            ctl.param_ui(ui, rate, rate.name);
        }
        if let Some(flow) = catalog.group("flow") {
            egui::CollapsingHeader::new(flow.label)
                .id_salt(("group", flow.prefix))
                .default_open(false)
                .show(ui, |ui| ctl.group_ui(ui, catalog, flow, &[]));
        }
    });
    egui::CollapsingHeader::new("Strategy parameters")
        .default_open(false)
        .show(ui, |ui| strategies_ui(state, ui, &mut ctl));
    egui::CollapsingHeader::new("Workload").default_open(true).show(ui, |ui| workload_ui(state, ui, &mut ctl));
    // Every other group (the top level's as *Run*), closed: nothing in the table goes without
    // a control.
    for group in &catalog.groups {
        let shown_here = group.prefix.is_empty() || !OWN_SECTIONS.contains(&group.prefix);
        if !shown_here || catalog.strategies_of(group).next().is_some() {
            continue;
        }
        egui::CollapsingHeader::new(group.label)
            .id_salt(("group", group.prefix))
            .default_open(false)
            .show(ui, |ui| ctl.group_ui(ui, catalog, group, &PLACED_ELSEWHERE));
    }
}

/// The estimates at the cursor, pinned under the scrolling controls so they stay visible at
/// 1280x800 (at the end of the controls they were cut off below the workload sliders): one
/// summary line per lane, and on opening, every estimate in a grid (a column per lane and side).
/// Closed by default so the controls above keep their room.
pub fn estimates_ui(state: &AppState, ui: &mut egui::Ui) {
    let cursor = state.cursor().as_secs_f64();
    let lanes = state.shown_lanes();
    let at = |v: &Vec<Sample>| {
        let n = v.partition_point(|p| p.t_s <= cursor);
        if n == 0 {
            0.0
        } else {
            v[n - 1].y
        }
    };
    // A figure with no sample at the cursor yet (an RTT of a side that measured none, a loss
    // estimate before any verdict) reads "-", never 0.0.
    let shown = |v: &Vec<Sample>, rtt_of: Option<&Vec<Sample>>| {
        let none = v.partition_point(|p| p.t_s <= cursor) == 0
            || rtt_of.is_some_and(|raw| raw.partition_point(|p| p.t_s <= cursor) == 0 && at(v) == 0.0);
        if none {
            "-".to_string()
        } else {
            super::plot_series::fixed(at(v), 1)
        }
    };
    let resp = egui::CollapsingHeader::new("Estimates at the cursor").default_open(false).show(ui, |ui| {
        egui::Grid::new("estimates").num_columns(1 + 2 * lanes.len()).striped(true).spacing([6.0, 1.0]).show(
            ui,
            |ui| {
                ui.label("");
                for lane in lanes {
                    let name = lane.info.label();
                    ui.label(egui::RichText::new(format!("{name} A")).small().strong());
                    ui.label(egui::RichText::new("B").small().strong());
                }
                ui.end_row();
                type Get = fn(&crate::model::Recording, Side) -> &Vec<Sample>;
                let rows: [(&str, Get, bool); 6] = [
                    ("RTT smoothed ms", |l, s| &l.store.side(s).rtt_smoothed_ms, true),
                    ("RTT display ms", |l, s| &l.store.side(s).rtt_display_ms, true),
                    ("loss est. %", |l, s| &l.store.side(s).loss_estimate_percent, false),
                    ("loss true %", |l, s| &l.store.side(s).loss_true_percent, false),
                    ("sent kbps", |l, s| &l.store.side(s).sent_kbps, false),
                    ("acked kbps", |l, s| &l.store.side(s).acked_kbps, false),
                ];
                for (name, get, rtt) in rows {
                    ui.label(egui::RichText::new(name).small());
                    for lane in lanes {
                        for side in Side::BOTH {
                            let raw = rtt.then(|| &lane.store.side(side).rtt_raw_ms);
                            ui.monospace(shown(get(lane, side), raw));
                        }
                    }
                    ui.end_row();
                }
                ui.label(egui::RichText::new("true link RTT ms").small());
                for lane in lanes {
                    ui.monospace(super::plot_series::fixed(at(&lane.store.true_rtt_ms), 1));
                    ui.label("");
                }
                ui.end_row();
            },
        );
    });
    if resp.body_returned.is_none() {
        for lane in lanes {
            let a = lane.store.side(Side::A);
            let line = format!(
                "{}: RTT {} ms, loss {} %, sent {} kbps",
                lane.info.label(),
                shown(&a.rtt_smoothed_ms, Some(&a.rtt_raw_ms)),
                shown(&a.loss_estimate_percent, None),
                super::plot_series::fixed(at(&a.sent_kbps), 1)
            );
            ui.label(egui::RichText::new(line).small()).on_hover_text("Side A; open for both sides and more");
        }
    }
}
