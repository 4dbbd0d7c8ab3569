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

pub mod compare;
pub mod export;
pub mod flow;
pub mod peer;
pub mod sweep;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use ackscope_protocol::{
    registry, reliable_metrics, snapshot_summary, Action, ChunkSummary, Dir, EstimateSummary, Event, PacketTotals,
    ParamChange, ReliableMetrics, Scenario, SimTime, Simulation, SnapshotSummary, Step, Strategy, Ue4Summary,
};
use serde::Serialize;

use crate::runtime::action;
use crate::session::{self, Session};
pub use flow::{FlowSummary, FlowSwitch};

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
    /// Reliable-message metrics, for message strategies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reliable: Option<ReliableMetrics>,
    /// Unreliable state snapshots: sent, received and staleness at the receiver (message strategies).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshots: Option<SnapshotSummary>,
    /// UE4 counters, for `strategy=ue4`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ue4: Option<Ue4Summary>,
    /// `"chunks"` and `"chunk_acks"`, for chunk and fragment transfers.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub chunk: Option<ChunkSummary>,
    /// Flow-control mode switches, when flow control was enabled at any point.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow: Option<FlowSummary>,
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
pub fn run_with_actions(scenario: &Scenario, seconds: f64, actions: &[Step]) -> anyhow::Result<FinishedRun> {
    let start = Instant::now();
    let mut events: Vec<Event> = Vec::new();
    let driven = drive(scenario, seconds, actions, None, |batch| events.extend(batch))?;
    let sim = driven.sim;
    let report = build(scenario, &events, (sim.totals(), sim.estimates()), sim.now(), driven.drain_seconds, start);
    let mut session = Session::scenario_only(scenario.clone());
    session.actions = driven.recorded;
    session.duration_us = sim.now().0;
    session.events = events;
    Ok(FinishedRun { report, sim, session })
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
    sink: impl FnMut(std::vec::Drain<'_, Event>),
) -> anyhow::Result<Driven> {
    drive_sim(Simulation::new(scenario.clone()), seconds, actions, cancel, sink)
}

/// [`drive`] on a simulation the caller made (a sweep turns its summary off).
pub fn drive_sim(
    mut sim: Simulation,
    seconds: f64,
    actions: &[Step],
    cancel: Option<&AtomicBool>,
    mut sink: impl FnMut(std::vec::Drain<'_, Event>),
) -> anyhow::Result<Driven> {
    let mut recorded = Vec::new();
    let cancelled = || cancel.is_some_and(|c| c.load(Ordering::Relaxed));
    let end = SimTime::from_secs_f64(seconds);
    let run_to = |sim: &mut Simulation, until: SimTime, sink: &mut dyn FnMut(std::vec::Drain<'_, Event>)| {
        while sim.now() < until && !cancelled() {
            sim.run_until(until.min(sim.now().plus_micros(EVENT_BATCH_US)));
            sink(sim.drain_events());
        }
        sim.run_until(until.min(sim.now()));
    };
    let mut sorted: Vec<&Step> = actions.iter().filter(|a| a.at <= end).collect();
    sorted.sort_by_key(|a| a.at);
    for step in sorted {
        run_to(&mut sim, step.at, &mut sink);
        action::apply_and_record(&mut sim, &mut recorded, step.action.clone())
            .map_err(|e| anyhow::anyhow!("action at {:.6} s ({}): {e:#}", step.at.as_secs_f64(), step.action))?;
        sink(sim.drain_events());
    }
    run_to(&mut sim, end, &mut sink);
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
        }
        drain_seconds = sim.now().saturating_since(drain_start).as_secs_f64();
    }
    sink(sim.drain_events());
    Ok(Driven { sim, recorded, drain_seconds, cancelled: cancelled() })
}

/// Runs a session file again, every lane (both in A/B): a recording without `seconds` is re-run
/// exactly (its scenario, its actions at their instants, for its duration; no drain is added, as
/// the recording's own is in its log), anything else runs for `seconds` (or 60) from its
/// scenario and actions, then drains. Returns the session with the new events and its report.
pub fn run_session(file: &Session, seconds: Option<f64>) -> anyhow::Result<(Session, RunReport)> {
    let start = Instant::now();
    if seconds.is_none() && file.has_events() {
        let again = session::rerun_all(file)?;
        let mut report = from_session(&again);
        report.wall_seconds = start.elapsed().as_secs_f64();
        return Ok((again, report));
    }
    let seconds = seconds.unwrap_or(DEFAULT_SECONDS);
    let mut out = Session { transport: Default::default(), ..file.header() };
    let mut reports = Vec::new();
    for (i, (scenario, actions)) in file.lanes().into_iter().enumerate() {
        let run = run_with_actions(&scenario, seconds, actions)?;
        if i == 0 {
            (out.actions, out.events, out.duration_us) =
                (run.session.actions, run.session.events, run.session.duration_us);
        } else {
            (out.ab_actions, out.ab_events) = (run.session.actions, run.session.events);
            out.duration_us = out.duration_us.max(run.session.duration_us);
        }
        reports.push(run.report);
    }
    let mut reports = reports.into_iter();
    let mut report = reports.next().expect("one lane at least");
    report.ab = reports.next().map(Box::new);
    Ok((out, report))
}

/// Virtual seconds a run lasts when nothing says otherwise (`run --seconds`' default).
pub const DEFAULT_SECONDS: f64 = 60.0;

/// The report of a recorded session, recomputed from its events (`ackscope summary`); an A/B
/// session's second lane is in `ab`.
pub fn from_session(session: &Session) -> RunReport {
    let mut report = lane_report(&session.scenario, &session.actions, &session.events, session.duration_us);
    if let Some(b) = session.ab {
        let scenario = Scenario { strategy: b, ..session.scenario.clone() };
        report.ab =
            Some(Box::new(lane_report(&scenario, &session.ab_actions, &session.ab_events, session.duration_us)));
    }
    report
}

/// One lane's report from its recorded events; the drain is found in its action log.
fn lane_report(scenario: &Scenario, actions: &[Step], events: &[Event], duration_us: u64) -> RunReport {
    let start = Instant::now();
    let drain_seconds = actions
        .iter()
        .rev()
        .find(|s| s.as_set() == Some(&ParamChange::new("workload.reliable_rate_hz", 0.0)))
        .map_or(0.0, |s| (duration_us.saturating_sub(s.at.0)) as f64 / 1e6);
    let truth = ackscope_protocol::summarize(events);
    build(scenario, events, truth, SimTime(duration_us), drain_seconds, start)
}

/// One report from a run's events, whether it just ran or was loaded: the strategy decides which
/// sections (reliable, snapshots, ue4, chunks) apply.
fn build(
    scenario: &Scenario,
    events: &[Event],
    (packets, estimates): (PacketTotals, EstimateSummary),
    end: SimTime,
    drain_seconds: f64,
    start: Instant,
) -> RunReport {
    let row = registry::info(scenario.strategy);
    let messages = row.has_messages;
    let chunk = row.has_chunks.then(|| {
        // The ideal adds the link's base round trip, as in the large-blocks seed.
        let l = &scenario.link;
        let rtt_ms = l.a_to_b.latency_ms + l.b_to_a.latency_ms;
        ChunkSummary::from_events(events, scenario.chunk.cost(), l.get(Dir::AtoB).bandwidth_kbps, rtt_ms)
    });
    RunReport {
        seed: scenario.seed,
        strategy: scenario.strategy.name().to_string(),
        simulated_seconds: end.as_secs_f64(),
        wall_seconds: start.elapsed().as_secs_f64(),
        packets,
        estimates,
        events: events.len() as u64,
        drain_seconds,
        session_bytes: None,
        reliable: messages.then(|| reliable_metrics(events)),
        snapshots: messages.then(|| snapshot_summary(events)),
        ue4: (scenario.strategy == Strategy::Ue4).then(|| Ue4Summary::from_events(events)),
        chunk,
        flow: FlowSummary::from_events(scenario, events),
        ab: None,
    }
}

/// [`run_with_actions`] without actions.
pub fn run(scenario: &Scenario, seconds: f64) -> FinishedRun {
    run_with_actions(scenario, seconds, &[]).expect("a run without actions cannot fail")
}

impl RunReport {
    /// A short human summary.
    pub fn to_text(&self) -> String {
        let p = &self.packets;
        let e = &self.estimates;
        format!(
            "ackscope: strategy {}, seed {}, {:.1} s simulated in {:.3} s\n\
             packets: {} sent, {} dropped by the link, {} delivered ({} duplicated), {} acked\n\
             ground truth: {} false acks, {} duplicate acks, {} malformed\n\
             RTT: estimated {:.1} ms, true {:.1} ms\n\
             loss: estimated {:.2} %, true {:.2} %\n\
             events: {}{}",
            self.strategy,
            self.seed,
            self.simulated_seconds,
            self.wall_seconds,
            p.sent,
            p.link_dropped,
            p.delivered,
            p.duplicated,
            p.acked,
            p.false_acks,
            p.duplicate_acks,
            p.malformed,
            e.rtt_ms,
            e.true_rtt_ms,
            e.loss_percent,
            e.true_loss_percent,
            self.events,
            self.reliable.as_ref().map(reliable_text).unwrap_or_default()
                + &self.snapshots.as_ref().map(snapshot_text).unwrap_or_default()
                + &self.ue4.as_ref().map(ue4_text).unwrap_or_default()
                + &self.chunk.as_ref().map(chunk_text).unwrap_or_default()
                + &self.flow.as_ref().map(FlowSummary::to_text).unwrap_or_default()
                + &self.ab.as_ref().map(|b| format!("\n\nsecond lane (A/B):\n{}", b.to_text())).unwrap_or_default()
        )
    }
}

fn chunk_text(c: &ChunkSummary) -> String {
    let mut out = String::new();
    for (i, k) in c.chunks.iter().enumerate() {
        out.push_str(&format!(
            "\nchunk {i}: {} bytes in {:.2} s (ideal {:.2} s), {} slices sent, {} resent",
            k.size_bytes, k.completion_seconds, k.ideal_seconds, k.slices_sent, k.slices_resent
        ));
    }
    let a = &c.chunk_acks;
    out.push_str(&format!(
        "\nchunk acks: {} packets, {} bytes out for {} bytes in",
        a.packets, a.bytes_out, a.bytes_in
    ));
    out
}

fn reliable_text(r: &ReliableMetrics) -> String {
    format!(
        "\nreliable messages: {} sent, {} delivered, {} lost, {} duplicated, {} out of order, {} corrupted\n\
         latency ms: p50 {:.1}, p95 {:.1}, p99 {:.1}, max {:.1}\n\
         {:.1} wire bytes per delivered message, {:.2} sends per message, {} spurious resends",
        r.sent,
        r.delivered,
        r.lost,
        r.duplicated,
        r.out_of_order,
        r.corrupted,
        r.latency_ms.p50,
        r.latency_ms.p95,
        r.latency_ms.p99,
        r.latency_ms.max,
        r.wire_bytes_per_delivered,
        r.sends_per_message,
        r.spurious_resends
    )
}

fn ue4_text(u: &Ue4Summary) -> String {
    format!(
        "\nue4: {} naks received, {} bunches resent, {} skip-acks, {} actor channels opened / {} closed, \
         InRec depth up to {} (actor {}, blocked up to {:.0} ms){}",
        u.naks_received,
        u.bunches_resent,
        u.skip_acks,
        u.channels_opened,
        u.channels_closed,
        u.max_inrec_depth,
        u.max_inrec_depth_by_kind.actor,
        u.max_inrec_blocked_ms,
        if u.connection_closed {
            format!(
                ", connection closed at {:.1} s: {} ({} messages abandoned)",
                u.closed_at_s.unwrap_or(0.0),
                u.close_reason.as_deref().unwrap_or("?"),
                u.abandoned_messages
            )
        } else {
            String::new()
        }
    )
}

fn snapshot_text(s: &SnapshotSummary) -> String {
    format!(
        "\nsnapshots: {} sent ({} resent), {} received; staleness ms p50 {:.1}, p99 {:.1}",
        s.sent, s.resent, s.received, s.staleness_ms.p50, s.staleness_ms.p99
    )
}
