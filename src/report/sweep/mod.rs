//! Parameter sweeps on virtual time: every combination of the varied parameters, for each
//! strategy and seed, run in parallel without recording events, one row of figures per point
//! and the (p99 latency, bytes per message) frontier of the whole sweep.
//!
//! A library first (`ackscope sweep` and the window's Tune tab both call [`run`]): it hands each
//! point to a callback as soon as its last seed finished, and stops at once when its cancel flag
//! is set. Runs are [`report::drive`](crate::report::drive) with the events folded as they come into the
//! same [`MetricsAccumulator`] `ackscope run` reads, so a point's figures for a seed are exactly
//! those `run` prints for that scenario.
//!
//! - Seeds: seed `k` of every point is `base seed + k`, so every strategy and every setting at
//!   seed `k` meets the same link trace (the link draws are keyed by seed, direction and send
//!   time).
//! - A parameter named after a strategy's settings (`glenn.*`, `ue4.*`, `hybrid.*`, ...) varies
//!   that strategy's points only; other strategies run once per combination of the rest (hybrid
//!   sends Glenn's packets, so Glenn's packet settings vary it too, but not Glenn's resend
//!   settings). Everything else (`link.*`, `workload.*`, ...) varies every strategy.
//! - Figures across seeds: the mean, and for p99 latency and bytes per message the spread
//!   (largest minus smallest seed).
//! - Only message strategies: the figures are message latency and bytes per message.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use ackscope_protocol::{
    registry, EndpointDriver, EventFilter, MetricsAccumulator, ReliableMetrics, Scenario, Simulation, Strategy,
};
use anyhow::{anyhow, bail, Result};
use rayon::prelude::*;
use serde::Serialize;

mod spec;

use crate::params::overrides;
pub use spec::{parse_vary, Vary, MAX_RUNS, MAX_VALUES};

/// What to sweep.
#[derive(Debug, Clone)]
pub struct SweepSpec {
    /// Every run starts from this scenario (its seed is seed 0 of the sweep).
    pub base: Scenario,
    /// Actions recorded in the scenario's file, applied in every run as `run` does.
    pub changes: Vec<ackscope_protocol::Step>,
    /// Virtual seconds per run (then the drain, as `run`).
    pub seconds: f64,
    pub vary: Vec<Vary>,
    pub strategies: Vec<Strategy>,
    pub seeds: u32,
}

/// One point: a strategy and the values of the varied parameters that concern it.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub strategy: Strategy,
    /// (name, value as given), in `--vary` order.
    pub values: Vec<(String, String)>,
}

/// One run's figures (one point at one seed), exactly as `ackscope run` reports them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SeedFigures {
    pub seed: u64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    /// `reliable.wire_bytes_per_delivered`: wire bytes both ways / messages delivered, reliable
    /// and snapshot alike (the snapshots count too).
    pub bytes_per_message: f64,
    pub sends_per_message: f64,
    pub spurious_resends: u64,
    pub lost: u64,
    /// With several clients: the largest of the clients' own p99 (the figures above are over
    /// every client's messages together). Absent with one client.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst_client_p99_ms: Option<f64>,
}

impl SeedFigures {
    /// The figures of one run, folded over every client, and each client's worst p99.
    fn of_run(seed: u64, acc: &MetricsAccumulator, clients: u32) -> Self {
        let worst = (clients > 1)
            .then(|| (1..=clients).filter_map(|k| acc.client(k)).map(|m| m.latency_ms.p99).fold(0.0, f64::max));
        Self { worst_client_p99_ms: worst, ..Self::of(seed, &acc.finish()) }
    }

    fn of(seed: u64, m: &ReliableMetrics) -> Self {
        Self {
            seed,
            p50_ms: m.latency_ms.p50,
            p95_ms: m.latency_ms.p95,
            p99_ms: m.latency_ms.p99,
            bytes_per_message: m.wire_bytes_per_delivered,
            sends_per_message: m.sends_per_message,
            spurious_resends: m.spurious_resends,
            lost: m.lost,
            worst_client_p99_ms: None,
        }
    }
}

/// One row of the sweep: a point's figures across its seeds. Field names are what `--json`
/// prints and scripts read: keep them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepRow {
    pub strategy: String,
    /// The varied parameters that concern this strategy: name -> value (numbers as numbers).
    pub values: BTreeMap<String, serde_json::Value>,
    /// Number of seeds; `runs` has one entry per seed.
    pub seeds: u32,
    /// Means across seeds.
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    /// Largest minus smallest p99 across seeds.
    pub p99_ms_spread: f64,
    pub bytes_per_message: f64,
    /// Largest minus smallest bytes per message across seeds.
    pub bytes_per_message_spread: f64,
    pub sends_per_message: f64,
    pub spurious_resends: f64,
    /// Reliable messages never delivered, summed over seeds (0 for every message strategy
    /// that drains).
    pub lost: u64,
    /// On the (p99 latency, bytes per message) frontier of the whole sweep: no other point that
    /// lost nothing is at least as good on both and better on one. A point that lost messages
    /// is never on it.
    pub pareto: bool,
    /// Each seed's figures, in seed order.
    pub runs: Vec<SeedFigures>,
    /// Clients per run (`--set clients=N`): every figure above is over all of them (latency
    /// percentiles and ratios over every client's messages together, counts summed). Absent
    /// with one client.
    #[serde(skip_serializing_if = "is_one")]
    pub clients: u32,
    /// With several clients: the mean across seeds of the worst client's own p99.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst_client_p99_ms: Option<f64>,
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

impl SweepRow {
    fn of(point: &Point, runs: Vec<SeedFigures>, clients: u32) -> Self {
        let n = runs.len().max(1) as f64;
        let worst: Vec<f64> = runs.iter().filter_map(|r| r.worst_client_p99_ms).collect();
        let worst_client_p99_ms = (!worst.is_empty()).then(|| worst.iter().sum::<f64>() / worst.len() as f64);
        let mean = |f: fn(&SeedFigures) -> f64| runs.iter().map(f).sum::<f64>() / n;
        let spread = |f: fn(&SeedFigures) -> f64| {
            let (lo, hi) =
                runs.iter().map(f).fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| (l.min(x), h.max(x)));
            if hi >= lo {
                hi - lo
            } else {
                0.0
            }
        };
        Self {
            strategy: point.strategy.name().to_string(),
            values: point.values.iter().map(|(k, v)| (k.clone(), json_value(v))).collect(),
            seeds: runs.len() as u32,
            p50_ms: mean(|r| r.p50_ms),
            p95_ms: mean(|r| r.p95_ms),
            p99_ms: mean(|r| r.p99_ms),
            p99_ms_spread: spread(|r| r.p99_ms),
            bytes_per_message: mean(|r| r.bytes_per_message),
            bytes_per_message_spread: spread(|r| r.bytes_per_message),
            sends_per_message: mean(|r| r.sends_per_message),
            spurious_resends: mean(|r| r.spurious_resends as f64),
            lost: runs.iter().map(|r| r.lost).sum(),
            pareto: false,
            runs,
            clients,
            worst_client_p99_ms,
        }
    }
}

/// A value as JSON: a number when it reads as one, `true`/`false`, else a string.
fn json_value(raw: &str) -> serde_json::Value {
    match serde_json::from_str::<serde_json::Value>(raw.trim()) {
        Ok(v @ (serde_json::Value::Number(_) | serde_json::Value::Bool(_))) => v,
        _ => serde_json::Value::String(raw.to_string()),
    }
}

/// The settings section a parameter belongs to when it is one strategy's own (`glenn`, `ue4`,
/// `hybrid`, ...), else None (it concerns every strategy).
fn section(name: &str) -> Option<&str> {
    let first = name.split('.').next()?;
    let own = Strategy::all().any(|s| s.name() == first) || first == "chunk";
    (own && name.contains('.')).then_some(first)
}

/// Glenn's resend settings: the `glenn.*` parameters hybrid does not read (it reads the rest).
const GLENN_RESEND: [&str; 3] = ["glenn.resend_delay_ms", "glenn.rtt_resend", "glenn.rtt_resend_factor"];

/// Whether varying `name` changes what `strategy` does (see the module doc).
pub fn concerns(strategy: Strategy, name: &str) -> bool {
    match section(name) {
        None => true,
        Some("glenn") if strategy == Strategy::Hybrid => !GLENN_RESEND.contains(&name),
        Some("chunk") => registry::info(strategy).has_chunks,
        Some(s) => s == strategy.name(),
    }
}

/// Every point of the sweep: per strategy, every combination of the values that concern it.
pub fn points(spec: &SweepSpec) -> Vec<Point> {
    let mut out = Vec::new();
    for &strategy in &spec.strategies {
        let own: Vec<&Vary> = spec.vary.iter().filter(|v| concerns(strategy, &v.name)).collect();
        let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
        for v in own {
            combos = combos
                .into_iter()
                .flat_map(|c| {
                    v.values.iter().map(move |x| {
                        let mut c = c.clone();
                        c.push((v.name.clone(), x.clone()));
                        c
                    })
                })
                .collect();
        }
        out.extend(combos.into_iter().map(|values| Point { strategy, values }));
    }
    out
}

/// The seed of run `k` of every point.
pub fn seed_of(base: &Scenario, k: u32) -> u64 {
    base.seed.wrapping_add(k as u64)
}

/// The scenario of `point` at seed index `k`: the base with the point's strategy, values and seed.
pub fn scenario_of(base: &Scenario, point: &Point, k: u32) -> Result<Scenario> {
    let mut s = base.clone();
    s.strategy = point.strategy;
    for (name, value) in &point.values {
        overrides::apply(&mut s, &format!("{name}={value}"))?;
    }
    s.seed = seed_of(base, k);
    Ok(s)
}

/// Checks the spec before anything runs: strategies carry messages, every value applies, the
/// sweep is not too large. Returns the points.
pub fn check(spec: &SweepSpec) -> Result<Vec<Point>> {
    if spec.strategies.is_empty() {
        bail!("no strategies to sweep");
    }
    for &s in &spec.strategies {
        if !registry::info(s).has_messages {
            let valid: Vec<&str> = registry::all().filter(|r| r.has_messages).map(|r| r.strategy.name()).collect();
            bail!(
                "strategy '{}' carries no messages; a sweep measures message latency and bytes per message (valid: {})",
                s.name(),
                valid.join(", ")
            );
        }
    }
    if spec.seeds == 0 {
        bail!("--seeds must be at least 1");
    }
    for v in &spec.vary {
        for x in &v.values {
            let mut s = spec.base.clone();
            overrides::apply(&mut s, &format!("{}={x}", v.name)).map_err(|e| anyhow!("--vary {}: {e:#}", v.name))?;
        }
    }
    let points = points(spec);
    let runs = points.len() as u64 * spec.seeds as u64;
    if runs > MAX_RUNS {
        bail!(
            "the sweep has {runs} runs ({} points x {} seeds); at most {MAX_RUNS}: narrow a range, raise a step or use fewer seeds",
            points.len(),
            spec.seeds
        );
    }
    Ok(points)
}

/// One run of `scenario` with events folded as they come; None when cancelled.
pub fn run_one(
    scenario: &Scenario,
    seconds: f64,
    changes: &[ackscope_protocol::Step],
    cancel: &AtomicBool,
) -> Result<Option<ReliableMetrics>> {
    Ok(run_folded(scenario, seconds, changes, cancel)?.map(|acc| acc.finish()))
}

/// [`run_one`], keeping every client's figures apart.
fn run_folded(
    scenario: &Scenario,
    seconds: f64,
    changes: &[ackscope_protocol::Step],
    cancel: &AtomicBool,
) -> Result<Option<MetricsAccumulator>> {
    let mut acc = MetricsAccumulator::new();
    // Only the message metrics are read: the simulation's own summary would be folded for
    // nothing, and the events the metrics do not read need not be built.
    let mut sim = Simulation::new(scenario.clone());
    sim.set_summary(false);
    sim.set_event_filter(EventFilter::MESSAGE_METRICS);
    // Every live action is known here (the changes, then the drain's workload stop): where none
    // may switch flow control on, its RTT filter need not be fed (the events stay the same).
    if !changes.iter().any(|c| EndpointDriver::may_switch_flow_on(&c.action)) {
        sim.fix_flow_off();
    }
    let driven = crate::report::drive_sim(sim, seconds, changes, Some(cancel), |batch| {
        for e in batch {
            acc.observe(&e);
        }
    })?;
    Ok((!driven.cancelled).then_some(acc))
}

/// Runs the sweep on `threads` worker threads (0 = one per core), calling `on_point(index,
/// row)` from a worker as each point's last seed finishes (its `pareto` is not known yet:
/// false). Returns every row in point order with `pareto` marked, or None when `cancel` was set
/// (the workers stop at their next second of virtual time).
pub fn run(
    spec: &SweepSpec,
    threads: usize,
    cancel: &AtomicBool,
    on_point: &(dyn Fn(usize, &SweepRow) + Sync),
) -> Result<Option<Vec<SweepRow>>> {
    let points = check(spec)?;
    let seeds = spec.seeds as usize;
    let jobs: Vec<(usize, u32)> = (0..points.len()).flat_map(|p| (0..spec.seeds).map(move |k| (p, k))).collect();
    let results: Vec<Mutex<Vec<Option<SeedFigures>>>> = points.iter().map(|_| Mutex::new(vec![None; seeds])).collect();
    let done: Vec<AtomicUsize> = points.iter().map(|_| AtomicUsize::new(0)).collect();
    let rows: Vec<Mutex<Option<SweepRow>>> = points.iter().map(|_| Mutex::new(None)).collect();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    pool.install(|| {
        jobs.par_iter().try_for_each(|&(p, k)| -> Result<()> {
            if cancel.load(Ordering::Relaxed) {
                return Ok(());
            }
            let scenario = scenario_of(&spec.base, &points[p], k)?;
            // A point's own count (`--vary clients=1,4,16` is a sweep over it).
            let clients = scenario.client_count();
            let Some(acc) = run_folded(&scenario, spec.seconds, &spec.changes, cancel)? else { return Ok(()) };
            lock(&results[p])[k as usize] = Some(SeedFigures::of_run(scenario.seed, &acc, clients));
            if done[p].fetch_add(1, Ordering::AcqRel) + 1 == seeds {
                let runs = lock(&results[p]).iter().flatten().copied().collect();
                let row = SweepRow::of(&points[p], runs, clients);
                on_point(p, &row);
                *lock(&rows[p]) = Some(row);
            }
            Ok(())
        })
    })?;
    if cancel.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let mut rows: Vec<SweepRow> =
        rows.into_iter().map(|r| r.into_inner().unwrap_or_else(|e| e.into_inner()).expect("every point ran")).collect();
    let flags = pareto_flags(&rows);
    for (row, on) in rows.iter_mut().zip(flags) {
        row.pareto = on;
    }
    Ok(Some(rows))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// For each row, whether it is on the (p99 latency, bytes per message) frontier of them all
/// (see [`SweepRow::pareto`]). Sorts once by p99 then bytes and sweeps: O(n log n).
pub fn pareto_flags(rows: &[SweepRow]) -> Vec<bool> {
    let mut order: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].lost == 0).collect();
    let key = |i: usize| (rows[i].p99_ms, rows[i].bytes_per_message);
    order.sort_by(|&a, &b| key(a).0.total_cmp(&key(b).0).then(key(a).1.total_cmp(&key(b).1)));
    let mut flags = vec![false; rows.len()];
    // The lowest bytes among rows with a strictly lower p99, and among rows with the same p99.
    let mut best_before = f64::INFINITY;
    let mut i = 0;
    while i < order.len() {
        let p99 = key(order[i]).0;
        let mut j = i;
        while j < order.len() && key(order[j]).0 == p99 {
            j += 1;
        }
        // Within one p99, sorted by bytes: only the smallest bytes (and its ties) can be on it.
        let lowest = key(order[i]).1;
        for &r in &order[i..j] {
            let b = key(r).1;
            flags[r] = b == lowest && b < best_before;
        }
        best_before = best_before.min(lowest);
        i = j;
    }
    flags
}

/// A row's value of each varied parameter as text, `missing` where it does not concern the
/// row's strategy.
fn value_cells(r: &SweepRow, names: &[&str], missing: &str) -> Vec<String> {
    let text = |v: &serde_json::Value| v.as_str().map_or(v.to_string(), str::to_string);
    names.iter().map(|n| r.values.get(*n).map_or(missing.to_string(), text)).collect()
}

/// Printed under a sweep's table when its runs have several clients.
pub const CLIENTS_LEGEND: &str = "\nWith several clients per run: p50/p95/p99, bytes/msg and sends/msg are over every \
client's messages together, spurious and lost summed over clients; worst client p99 = the largest of the clients' \
own p99 (mean across seeds).\n";

/// The table `ackscope sweep` prints without `--json`: one line per point.
pub fn to_table(spec: &SweepSpec, rows: &[SweepRow]) -> String {
    let names: Vec<&str> = spec.vary.iter().map(|v| v.name.as_str()).collect();
    let mut out = String::from("| strategy |");
    for n in &names {
        out.push_str(&format!(" {n} |"));
    }
    let many = rows.iter().any(|r| r.clients > 1);
    out.push_str(
        " seeds | p50 ms | p95 ms | p99 ms | p99 spread | bytes/msg | sends/msg | spurious | lost | frontier |",
    );
    if many {
        out.push_str(" worst client p99 ms |");
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(names.len() + 10 + usize::from(many)));
    out.push('\n');
    for r in rows {
        let cells: String = value_cells(r, &names, "-").iter().map(|v| format!(" {v} |")).collect();
        out.push_str(&format!("| {} |{cells}", r.strategy));
        out.push_str(&format!(
            " {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} | {:.1} | {} | {} |\n",
            r.seeds,
            r.p50_ms,
            r.p95_ms,
            r.p99_ms,
            r.p99_ms_spread,
            r.bytes_per_message,
            r.sends_per_message,
            r.spurious_resends,
            r.lost,
            if r.pareto { "yes" } else { "" }
        ));
        if many {
            out.pop();
            out.push_str(&format!(" {} |\n", r.worst_client_p99_ms.map_or("-".into(), |v| format!("{v:.1}"))));
        }
    }
    if many {
        out.push_str(CLIENTS_LEGEND);
    }
    out
}

/// The rows as CSV: strategy, each varied parameter (empty where it does not concern the
/// strategy), then the figures.
pub fn to_csv(spec: &SweepSpec, rows: &[SweepRow]) -> String {
    let names: Vec<&str> = spec.vary.iter().map(|v| v.name.as_str()).collect();
    let mut out = String::from("strategy");
    for n in &names {
        out.push_str(&format!(",{n}"));
    }
    let many = rows.iter().any(|r| r.clients > 1);
    out.push_str(",seeds,p50_ms,p95_ms,p99_ms,p99_ms_spread,bytes_per_message,bytes_per_message_spread,sends_per_message,spurious_resends,lost,pareto");
    out.push_str(if many { ",clients,worst_client_p99_ms\n" } else { "\n" });
    for r in rows {
        let cells: String = value_cells(r, &names, "").iter().map(|v| format!(",{v}")).collect();
        out.push_str(&format!("{}{cells}", r.strategy));
        let means = [r.p50_ms, r.p95_ms, r.p99_ms, r.p99_ms_spread, r.bytes_per_message, r.bytes_per_message_spread];
        let rest =
            [r.sends_per_message.to_string(), r.spurious_resends.to_string(), r.lost.to_string(), r.pareto.to_string()];
        let figures: Vec<String> =
            std::iter::once(r.seeds.to_string()).chain(means.iter().map(f64::to_string)).chain(rest).collect();
        out.push_str(&format!(",{}", figures.join(",")));
        if many {
            out.push_str(&format!(",{},{}", r.clients, r.worst_client_p99_ms.map_or(String::new(), |v| v.to_string())));
        }
        out.push('\n');
    }
    out
}
