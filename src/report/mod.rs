//! Headless runs and the figures they report: one scenario on virtual time ([`run`],
//! [`run_with_actions`]), a session file run again ([`run_session`]: a recording re-run exactly,
//! both lanes of an A/B one), the figures of a recording ([`from_session`]), a grid of runs
//! ([`compare`]), and one endpoint on real UDP against another process ([`peer`]); and a
//! recording exported as tables ([`export`]).
//!
//! This is library code, apart from the command line (`crate::cli` parses arguments and prints):
//! tests, examples and the window can run and summarise the same way `ackscope run` does.
//! Field names in [`RunReport`], [`compare::CompareRow`] and [`peer::PeerReport`] are an
//! interface people script against: keep them.

pub mod bandwidth;
pub mod compare;
pub mod compare_sessions;
pub mod decoded;
pub mod export;
pub mod flow;
pub mod fold;
pub mod peer;
pub mod peer_join;
pub mod pipeline;
pub mod sections;
pub mod sweep;
mod text;
pub use text::{discards_text, opt_figure};

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use ackscope_protocol::{
    registry, Action, EstimateSummary, Event, PacketTotals, ParamChange, Scenario, ServerSummary, SimTime, Simulation,
    Step, SummaryAccumulator,
};
use anyhow::{anyhow, Context};
use serde::Serialize;

use crate::lane::Origin;
use crate::runtime::action;
use crate::session::stream::SessionStream;
use crate::session::{self, Session};
pub use bandwidth::{Bandwidth, RunBandwidth};
pub use flow::{FlowSummary, FlowSwitch};
pub use fold::{ClientReport, RunEnd, RunFold};
pub use sections::Sections;

/// What `ackscope run --json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    pub seed: u64,
    pub strategy: String,
    pub simulated_seconds: f64,
    pub wall_seconds: f64,
    /// Totals over both directions, from the link's ground truth and the endpoints' reports.
    pub packets: PacketTotals,
    pub estimates: EstimateSummary,
    /// Number of events the run produced.
    pub events: u64,
    /// Virtual seconds spent after `--seconds` letting reliable messages drain (workload stopped).
    pub drain_seconds: f64,
    /// Size of the session file written with `--out`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_bytes: Option<u64>,
    /// The strategy's sections: `reliable`, `snapshots`, `ue4`, `chunks` and `chunk_acks`, `flow`.
    #[serde(flatten)]
    pub sections: Sections,
    /// Each side's sent / received / acked kbps, mean and p95 over its `Stats` samples (issue 24).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<RunBandwidth>,
    /// What a passive decoder read from real traffic, for a proxy's or a capture's lane (which
    /// has no workload, so no reliable or snapshot section): see [`decoded`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decoded: Option<decoded::DecodedSummary>,
    /// Each client's figures, in a run of several clients (the figures above are then over
    /// every client: totals summed, estimates the mean over clients).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clients: Option<Vec<ClientReport>>,
    /// The server's totals and its shared uplink, in a run of several clients.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerSummary>,
    /// The second lane of an A/B session (the same report for its strategy).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ab: Option<Box<RunReport>>,
}

/// Longest the run keeps going after `--seconds` for unacked reliable messages to drain; messages
/// still unacked then count as lost.
pub const MAX_DRAIN_SECONDS: f64 = 30.0;

/// A finished headless run: the report, the simulation in its final state, and the recording.
pub struct FinishedRun {
    pub report: RunReport,
    pub sim: Simulation,
    /// Header, action log and every event: what `--out` saves.
    pub session: Session,
}

/// Runs `scenario` for `seconds` of virtual time as fast as the CPU allows, applying `actions`
/// at their times, then (for message strategies) stops the workload and drains: the drain's
/// parameter changes are logged like any action, so a re-run of the saved session repeats it.
/// Keeps every event (the session); [`run_folded`] keeps none.
pub fn run_with_actions(scenario: &Scenario, seconds: f64, actions: &[Step]) -> anyhow::Result<FinishedRun> {
    let start = Instant::now();
    let mut events: Vec<Event> = Vec::new();
    let mut fold = RunFold::new(scenario);
    let driven = drive(scenario, seconds, actions, None, |batch| {
        let from = events.len();
        events.extend(batch);
        fold.observe(&events[from..]);
    })?;
    let sim = driven.sim;
    let report = fold.report(&run_end(&sim, driven.drain_seconds, start));
    let mut session = Session::scenario_only(scenario.clone());
    session.actions = driven.recorded;
    session.duration_us = sim.now().0;
    session.events = events;
    Ok(FinishedRun { report, sim, session })
}

/// The end of a run that just finished: its simulation's own summary, its length.
fn run_end(sim: &Simulation, drain_seconds: f64, start: Instant) -> RunEnd<'_> {
    RunEnd {
        truth: sim.summary(),
        simulated_seconds: sim.now().as_secs_f64(),
        drain_seconds,
        wall_seconds: start.elapsed().as_secs_f64(),
    }
}

/// A headless run that keeps no event: [`run_with_actions`]'s figures, folded as the events come,
/// with every event also written to `out` when given (in order; the actions recorded follow at
/// the end). Memory stays flat however long the run.
pub fn run_folded(
    scenario: &Scenario,
    seconds: f64,
    actions: &[Step],
    mut out: Option<&mut SessionStream>,
    fold: RunFold,
) -> anyhow::Result<(RunReport, RunFold, Driven)> {
    let start = Instant::now();
    let (mut fold, mut failed) = (fold, None);
    // The fold (and the file) on a thread of its own, beside the simulation.
    let driven = pipeline::fold_beside(
        |batch| {
            fold.observe(batch);
            if let (Some(w), None) = (out.as_deref_mut(), &failed) {
                failed = w.append(batch, &[]).err();
            }
        },
        |hand_over| drive_with(scenario, seconds, actions, None, hand_over),
    )?;
    if let Some(e) = failed {
        return Err(e);
    }
    if let Some(w) = out {
        w.append(&[], &driven.recorded)?;
        w.set_duration(driven.sim.now().0);
    }
    let report = fold.report(&run_end(&driven.sim, driven.drain_seconds, start));
    Ok((report, fold, driven))
}

/// A headless run as [`drive`] leaves it.
pub struct Driven {
    pub sim: Simulation,
    /// The actions applied, with the workload stop before the drain: a re-run repeats them.
    pub recorded: Vec<Step>,
    /// Virtual seconds spent draining after `seconds`.
    pub drain_seconds: f64,
    /// True when `cancel` stopped the run before its end.
    pub cancelled: bool,
}

/// Virtual time between two hand-overs of events to the sink: keeps a run that folds its events
/// as they come (a sweep) from holding them all, and changes no event.
const EVENT_BATCH_US: u64 = 1_000_000;

/// The one headless run loop behind `run` and `sweep`: `scenario` for `seconds` of virtual time,
/// `actions` applied at their times, then (for message strategies) the workload stopped and
/// unacked reliable messages drained for at most [`MAX_DRAIN_SECONDS`]. Every event goes to
/// `sink` in emission order, in batches; a set `cancel` stops the run at the next batch.
pub fn drive(
    scenario: &Scenario,
    seconds: f64,
    actions: &[Step],
    cancel: Option<&AtomicBool>,
    mut sink: impl FnMut(std::vec::Drain<'_, Event>),
) -> anyhow::Result<Driven> {
    drive_with(scenario, seconds, actions, cancel, &mut |sim| sink(sim.drain_events()))
}

/// [`drive`] handing over the simulation itself whenever its events are due to go: the caller
/// drains them or takes them whole ([`Simulation::take_events`]).
fn drive_with(
    scenario: &Scenario,
    seconds: f64,
    actions: &[Step],
    cancel: Option<&AtomicBool>,
    hand_over: &mut dyn FnMut(&mut Simulation),
) -> anyhow::Result<Driven> {
    let mut scenario = scenario.clone();
    crate::fit::links::resolve(&mut scenario)?;
    let sim = Simulation::try_new(scenario).map_err(|e| anyhow!("{e}"))?;
    drive_sim_with(sim, seconds, actions, cancel, hand_over)
}

/// [`drive`] on a simulation the caller made (a sweep turns its summary off).
pub fn drive_sim(
    sim: Simulation,
    seconds: f64,
    actions: &[Step],
    cancel: Option<&AtomicBool>,
    mut sink: impl FnMut(std::vec::Drain<'_, Event>),
) -> anyhow::Result<Driven> {
    drive_sim_with(sim, seconds, actions, cancel, &mut |sim| sink(sim.drain_events()))
}

/// The loop of [`drive_sim`], with [`drive_with`]'s hand-over.
fn drive_sim_with(
    mut sim: Simulation,
    seconds: f64,
    actions: &[Step],
    cancel: Option<&AtomicBool>,
    hand_over: &mut dyn FnMut(&mut Simulation),
) -> anyhow::Result<Driven> {
    let mut recorded = Vec::new();
    let cancelled = || cancel.is_some_and(|c| c.load(Ordering::Relaxed));
    let end = SimTime::from_secs_f64(seconds);
    let run_to = |sim: &mut Simulation, until: SimTime, hand_over: &mut dyn FnMut(&mut Simulation)| {
        while sim.now() < until && !cancelled() {
            sim.run_until(until.min(sim.now().plus_micros(EVENT_BATCH_US)));
            hand_over(sim);
        }
        sim.run_until(until.min(sim.now()));
    };
    let mut sorted: Vec<&Step> = actions.iter().filter(|a| a.at <= end).collect();
    sorted.sort_by_key(|a| a.at);
    for step in sorted {
        run_to(&mut sim, step.at, hand_over);
        action::apply_and_record(&mut sim, &mut recorded, step.action.clone())
            .map_err(|e| anyhow::anyhow!("action at {:.6} s ({}): {e:#}", step.at.as_secs_f64(), step.action))?;
        hand_over(&mut sim);
    }
    run_to(&mut sim, end, hand_over);
    let is_messages = registry::info(sim.scenario().strategy).has_messages;
    let mut drain_seconds = 0.0;
    if is_messages && !cancelled() {
        // Stop the workload (recorded like any action, so a re-run repeats it), then let every
        // unacked reliable message arrive or give up after MAX_DRAIN_SECONDS.
        for name in ["workload.snapshot_rate_hz", "workload.reliable_rate_hz"] {
            action::apply_and_record(&mut sim, &mut recorded, Action::Set(ParamChange::new(name, 0.0)))?;
        }
        let drain_start = sim.now();
        let limit = drain_start.plus_micros((MAX_DRAIN_SECONDS * 1e6) as u64);
        while sim.unacked_reliable() > 0 && sim.now() < limit && !cancelled() {
            let next = sim.now().plus_micros(10_000).min(limit);
            sim.run_until(next);
            // Handed over as they come: a drain of many clients makes as many events per
            // second as the run.
            hand_over(&mut sim);
        }
        drain_seconds = sim.now().saturating_since(drain_start).as_secs_f64();
    }
    hand_over(&mut sim);
    Ok(Driven { sim, recorded, drain_seconds, cancelled: cancelled() })
}

/// Runs a session file again, every lane (both in A/B), and writes the new session to `out` when
/// given: a recording without `seconds` is re-run exactly (its scenario, its actions at their
/// instants, for its duration; no drain is added, as the recording's own is in its log), anything
/// else runs for `seconds` (or 60) from its scenario and actions, then drains. Returns its
/// report (with the session's size when written).
///
/// A run from a scenario keeps no event in memory: its figures are folded as the events come and
/// `out` is written as they come (a file of its own beside `out`, renamed over it at the end, so
/// an interrupted run never leaves half a file under that name). An A/B session written to `out`
/// holds both lanes' events until it is saved (a streamed file holds one lane); a run of several
/// clients is written as session format 3, each event with its client.
pub fn run_session(file: &Session, seconds: Option<f64>, out: Option<&Path>) -> anyhow::Result<RunReport> {
    let start = Instant::now();
    if seconds.is_none() && file.has_events() {
        let again = session::rerun_all(file)?;
        let mut report = from_session(&again);
        report.wall_seconds = start.elapsed().as_secs_f64();
        if let Some(out) = out {
            report.session_bytes = Some(session::save(&again, out)?);
        }
        return Ok(report);
    }
    let seconds = seconds.unwrap_or(DEFAULT_SECONDS);
    let lanes = file.lanes();
    match out {
        Some(out) if lanes.len() > 1 => run_ab_to_file(file, seconds, out),
        Some(out) => {
            let (scenario, actions) = &lanes[0];
            stream_to_file(file, scenario, seconds, actions, out)
        }
        None => {
            let mut reports = Vec::new();
            for (scenario, actions) in &lanes {
                reports.push(run_folded(scenario, seconds, actions, None, RunFold::new(scenario))?.0);
            }
            Ok(join_lanes(reports))
        }
    }
}

/// The first lane's report with the second's (A/B) in `ab`.
fn join_lanes(reports: Vec<RunReport>) -> RunReport {
    let mut reports = reports.into_iter();
    let mut report = reports.next().expect("one lane at least");
    report.ab = reports.next().map(Box::new);
    report
}

/// An A/B run written to `out`: both lanes' events held, then the session saved.
fn run_ab_to_file(file: &Session, seconds: f64, out: &Path) -> anyhow::Result<RunReport> {
    let mut session = Session { transport: Default::default(), ..file.header() };
    let mut reports = Vec::new();
    for (i, (scenario, actions)) in file.lanes().into_iter().enumerate() {
        let run = run_with_actions(&scenario, seconds, actions)?;
        if i == 0 {
            (session.actions, session.events, session.duration_us) =
                (run.session.actions, run.session.events, run.session.duration_us);
        } else {
            (session.ab_actions, session.ab_events) = (run.session.actions, run.session.events);
            session.duration_us = session.duration_us.max(run.session.duration_us);
        }
        reports.push(run.report);
    }
    let mut report = join_lanes(reports);
    report.session_bytes = Some(session::save(&session, out)?);
    Ok(report)
}

/// One lane run with its events written to a file beside `out` as they come, renamed over `out`
/// once complete (the name a killed save's file has, `.NAME.ron.tmp-PID`, which the next save
/// tidies away).
fn stream_to_file(
    file: &Session,
    scenario: &Scenario,
    seconds: f64,
    actions: &[Step],
    out: &Path,
) -> anyhow::Result<RunReport> {
    let origin = out.display().to_string();
    let dir = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = out.file_name().ok_or_else(|| anyhow!("{origin}: not a file name"))?.to_string_lossy();
    session::remove_stale_temps(dir);
    let tmp: PathBuf = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let header = Session { transport: Default::default(), ..file.header() };
    let result = (|| -> anyhow::Result<RunReport> {
        let mut stream = SessionStream::create(&tmp, &header)?;
        let (mut report, _, _) = run_folded(scenario, seconds, actions, Some(&mut stream), RunFold::new(scenario))?;
        let bytes = stream.finish()?;
        std::fs::rename(&tmp, out).with_context(|| format!("{origin}: cannot replace the file"))?;
        report.session_bytes = Some(bytes);
        Ok(report)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Virtual seconds a run lasts when nothing says otherwise (`run --seconds`' default).
pub const DEFAULT_SECONDS: f64 = 60.0;

/// The report of a recorded session, recomputed from its events (`ackscope summary`); an A/B
/// session's second lane is in `ab`.
pub fn from_session(session: &Session) -> RunReport {
    // A lane of another origin is described by its protocol, never by the (default) scenario's
    // strategy: a proxy's ENet lane reports as ENet, with what was decoded.
    let fold = if session.is_simulated() {
        RunFold::new(&session.scenario)
    } else {
        let decoded = matches!(session.origin, Some(Origin::Proxy { .. } | Origin::Capture { .. }));
        RunFold::for_lane(&session.scenario, &session.protocol(), decoded)
    };
    let mut report = lane_report(fold, &session.actions, &session.events, session.duration_us);
    if let Some(b) = session.ab {
        let scenario = Scenario { strategy: b, ..session.scenario.clone() };
        report.ab = Some(Box::new(lane_report(
            RunFold::new(&scenario),
            &session.ab_actions,
            &session.ab_events,
            session.duration_us,
        )));
    }
    report
}

/// One lane's report from its recorded events (the same fold a run makes); the drain is found in
/// its action log.
fn lane_report(mut fold: RunFold, actions: &[Step], events: &[Event], duration_us: u64) -> RunReport {
    let start = Instant::now();
    let drain_seconds = actions
        .iter()
        .rev()
        .find(|s| s.as_set() == Some(&ParamChange::new("workload.reliable_rate_hz", 0.0)))
        .map_or(0.0, |s| (duration_us.saturating_sub(s.at.0)) as f64 / 1e6);
    let mut truth = SummaryAccumulator::default();
    truth.observe(events);
    fold.observe(events);
    fold.report(&RunEnd {
        truth: &truth,
        simulated_seconds: SimTime(duration_us).as_secs_f64(),
        drain_seconds,
        wall_seconds: start.elapsed().as_secs_f64(),
    })
}

/// [`run_with_actions`] without actions.
pub fn run(scenario: &Scenario, seconds: f64) -> FinishedRun {
    run_with_actions(scenario, seconds, &[]).expect("a run without actions cannot fail")
}
