//! The Tune tab's sweep job: one parameter over a range, for some strategies and seeds, run by
//! [`crate::report::sweep::run`] on worker threads while the window stays live.
//!
//! The job belongs to the app state (views never start threads): [`AppCommand::TuneRun`]
//! starts it from a [`TuneSetup`] the panel built, rows arrive over a channel as each point's
//! last seed finishes and are picked up by [`TuneJob::poll`] once per frame, and
//! [`AppCommand::TuneCancel`] sets the sweep's cancel flag, which every worker reads at each
//! simulated second, so they stop at once. The rows are the same [`SweepRow`]s `ackscope sweep`
//! prints, so the tab and the command line never disagree.
//!
//! [`AppCommand::TuneRun`]: crate::app::AppCommand::TuneRun
//! [`AppCommand::TuneCancel`]: crate::app::AppCommand::TuneCancel

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ackscope_protocol::{Scenario, Strategy};
use anyhow::Result;
use crossbeam_channel::{Receiver, TryRecvError};

use crate::params::{self, Kind};
use crate::report::sweep::{self, Point, SweepRow, SweepSpec, Vary};

/// What to sweep, as the panel chose it.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneSetup {
    /// A number parameter of the table, by its dotted name.
    pub param: String,
    pub start: f64,
    pub end: f64,
    pub step: f64,
    /// The strategies to sweep, by name (the catalog's rows: the panel never matches on the
    /// `Strategy` enum); a name the simulation does not run is refused when the sweep starts.
    pub strategies: Vec<String>,
    pub seeds: u32,
    /// Simulated seconds per run.
    pub seconds: f64,
}

impl TuneSetup {
    /// A setup for `param` over its default range ([`default_range`]).
    pub fn for_param(param: &str) -> Self {
        let (start, end, step) = default_range(param);
        Self {
            param: param.to_string(),
            start,
            end,
            step,
            strategies: [Strategy::Glenn, Strategy::Ue4, Strategy::Hybrid].map(|s| s.name().to_string()).to_vec(),
            seeds: 3,
            seconds: 30.0,
        }
    }

    /// The `--vary` spec this setup stands for (`NAME=START:END:STEP`).
    pub fn vary_spec(&self) -> String {
        format!("{}={}:{}:{}", self.param, self.start, self.end, self.step)
    }
}

impl Default for TuneSetup {
    fn default() -> Self {
        Self::for_param("glenn.resend_delay_ms")
    }
}

/// Ranges worth sweeping for the knobs users tune; other numbers get their table range in ten
/// steps. A demanding user wants the interesting part of a knob at once (resend delays under a
/// few RTTs, not up to a second), and still every knob of the table.
const DEFAULT_RANGES: [(&str, f64, f64, f64); 9] = [
    ("glenn.resend_delay_ms", 0.0, 300.0, 25.0),
    ("glenn.rtt_resend_factor", 0.5, 3.0, 0.25),
    ("hybrid.rtt_factor", 0.75, 3.0, 0.25),
    ("hybrid.redundancy_budget_bytes", 0.0, 256.0, 32.0),
    ("hybrid.redundant_copies", 0.0, 4.0, 1.0),
    ("ue4.net_speed_bytes_per_sec", 2500.0, 40_000.0, 2500.0),
    ("ue4.keepalive_ms", 25.0, 1000.0, 75.0),
    ("send_rate_pps", 10.0, 120.0, 10.0),
    ("link.loss_percent", 0.0, 30.0, 2.5),
];

/// The default sweep range of a number parameter: a curated one ([`DEFAULT_RANGES`]), else its
/// table range in ten steps (whole steps for whole-number parameters).
pub fn default_range(name: &str) -> (f64, f64, f64) {
    if let Some(&(_, a, b, s)) = DEFAULT_RANGES.iter().find(|(n, ..)| *n == name) {
        return (a, b, s);
    }
    match params::find(name).map(|p| p.kind) {
        Some(Kind::Number { min, max, integer, .. }) => {
            let step = (max - min) / 10.0;
            (min, max, if integer { step.round().max(1.0) } else { step })
        }
        _ => (0.0, 1.0, 0.1),
    }
}

/// The value of the number parameter `name` in `scenario` (`link.X` reads the A->B direction),
/// read through the scenario's typed field.
pub fn live_value(scenario: &Scenario, name: &str) -> Option<f64> {
    scenario.value(name)?.as_f64()
}

/// A sweep started from the window, and the rows that arrived so far.
#[derive(Default)]
pub struct TuneJob {
    /// The setup of the latest sweep started.
    pub setup: Option<TuneSetup>,
    /// The scenario it started from (its seed is seed 0 of every point).
    pub base: Option<Scenario>,
    /// Every point, in sweep order; `rows[i]` is point i's figures once it finished.
    pub points: Vec<Point>,
    pub rows: Vec<Option<SweepRow>>,
    /// Why the latest sweep could not start or failed.
    pub error: Option<String>,
    cancel: Option<Arc<AtomicBool>>,
    rx: Option<Receiver<(usize, SweepRow)>>,
    /// The thread that runs the sweep (kept after a cancel to tell when its workers stopped).
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TuneJob {
    /// Starts sweeping `setup` from `base` on worker threads; `wake` is called as rows arrive.
    /// A sweep still running is cancelled first.
    pub fn start(&mut self, base: &Scenario, setup: TuneSetup, wake: Arc<dyn Fn() + Send + Sync>) {
        self.cancel();
        self.error = None;
        match self.try_start(base, &setup, wake) {
            Ok(()) => self.setup = Some(setup),
            Err(e) => self.error = Some(format!("{e:#}")),
        }
    }

    fn try_start(&mut self, base: &Scenario, setup: &TuneSetup, wake: Arc<dyn Fn() + Send + Sync>) -> Result<()> {
        let vary: Vary = sweep::parse_vary(&setup.vary_spec()).map_err(anyhow::Error::msg)?;
        let strategies = setup
            .strategies
            .iter()
            .map(|name| Strategy::parse(name).map_err(|e| anyhow::anyhow!("cannot sweep '{name}': {e}")))
            .collect::<Result<Vec<_>>>()?;
        let spec = SweepSpec {
            base: base.clone(),
            changes: Vec::new(),
            seconds: setup.seconds,
            vary: vec![vary],
            strategies,
            seeds: setup.seeds,
        };
        self.points = sweep::check(&spec)?;
        self.rows = vec![None; self.points.len()];
        self.base = Some(base.clone());
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, rx) = crossbeam_channel::unbounded();
        self.cancel = Some(cancel.clone());
        self.rx = Some(rx);
        let thread = std::thread::Builder::new().name("tune sweep".into()).spawn(move || {
            let on_point = |i: usize, row: &SweepRow| {
                let _ = tx.send((i, row.clone()));
                wake();
            };
            // An error after check() is a broken invariant (check applied every value); the
            // rows that arrived stay shown.
            let _ = sweep::run(&spec, 0, &cancel, &on_point);
        })?;
        self.thread = Some(thread);
        Ok(())
    }

    /// Moves the rows that arrived into [`TuneJob::rows`]; true when any did.
    pub fn poll(&mut self) -> bool {
        let Some(rx) = &self.rx else { return false };
        let mut any = false;
        loop {
            match rx.try_recv() {
                Ok((i, row)) => {
                    if let Some(slot) = self.rows.get_mut(i) {
                        *slot = Some(row);
                        any = true;
                    }
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    self.rx = None;
                    break;
                }
            }
        }
        any
    }

    /// Stops the workers at their next simulated second; the rows so far stay.
    pub fn cancel(&mut self) {
        if let Some(c) = self.cancel.take() {
            c.store(true, Ordering::Relaxed);
        }
        self.rx = None;
    }

    /// True while workers run.
    pub fn running(&self) -> bool {
        self.rx.is_some()
    }

    /// True once the sweep's thread and its workers have all returned (or none ran).
    pub fn workers_stopped(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    /// Points finished so far.
    pub fn done(&self) -> usize {
        self.rows.iter().flatten().count()
    }

    /// The finished rows with their point index and frontier flag among the finished rows.
    pub fn finished(&self) -> Vec<(usize, SweepRow)> {
        let mut got: Vec<(usize, SweepRow)> =
            self.rows.iter().enumerate().filter_map(|(i, r)| r.clone().map(|r| (i, r))).collect();
        let rows: Vec<SweepRow> = got.iter().map(|(_, r)| r.clone()).collect();
        for ((_, r), on) in got.iter_mut().zip(sweep::pareto_flags(&rows)) {
            r.pareto = on;
        }
        got
    }

    /// The scenario of point `i` at seed 0 of the sweep (what a click re-runs).
    pub fn scenario_of(&self, i: usize) -> Option<Scenario> {
        let base = self.base.as_ref()?;
        sweep::scenario_of(base, self.points.get(i)?, 0).ok()
    }
}

impl Drop for TuneJob {
    fn drop(&mut self) {
        self.cancel();
    }
}
