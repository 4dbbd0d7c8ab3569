//! The many-client loop in time windows: each connection runs a short stretch of virtual time on
//! its own, then the stretch's instants are put back in the order the instant-by-instant loop
//! takes them, so the events are exactly the same.
//!
//! Why: the instant-by-instant loop visits the clients in time order, so with a thousand clients
//! every instant lands on a connection whose state (two endpoints, their reliable channels and
//! ack buffers, two links, the client's summary) has left the cache since its last instant, and
//! an event cost six times what it costs with one client (README, Performance). Run a connection
//! for a window of [`WINDOW_US`] and its state is fetched once for all the instants it has in
//! that window.
//!
//! Why the events stay the same: with no shared uplink and no scripted step due, nothing a
//! connection does at an instant reads or changes another's state (each has its own links, send
//! ids, seeds and endpoints; the summary folds each client apart). So each connection's
//! instants, run alone, make the events they make in the one loop; the one loop takes the
//! instants of all connections by (time, client), which is the order the window's instants are
//! sorted into before their events are handed on.

use crate::event::{Event, SimTime, FIRST_CLIENT};

use super::Simulation;

/// Virtual time each connection runs alone before the window's events are ordered. Longer is
/// faster, up to the span a caller runs at once (the CLI hands events on every simulated
/// second): `clients_speed 1000 10` (default scenario) took 546 ns of CPU per event with 5 ms
/// windows, 473 with 20 ms, 288 with 100 ms and 202 with 1 s, against 569 instant by instant.
/// The price is memory: a window's events are held twice, in the connections' buffers and once
/// ordered (at 1000 such clients, about 930,000 events of 72 bytes per simulated second).
pub(super) const WINDOW_US: u64 = 1_000_000;

/// The buffers of the windowed loop, kept from window to window.
#[derive(Default)]
pub(super) struct Windows {
    /// Each connection's events of the current window, in its own order.
    events: Vec<Vec<Event>>,
    /// Every instant of the window: (time, connection index, how many events it made).
    instants: Vec<Slot>,
    /// Room for [`sort_by_time`]'s passes.
    scratch: Vec<Slot>,
}

/// An instant of one connection: (time, connection index, how many events it made).
type Slot = (u64, u32, u32);

/// Sorts `instants`, pushed connection by connection (each connection's in time order), into
/// (time, connection) order.
///
/// Why not `sort_unstable`: a second of 1000 clients has about 300,000 instants, and comparing
/// them was about a tenth of the windowed loop's time (perf, `run --set clients=1000`). Pushed in
/// connection order, a stable sort by time alone gives (time, connection); a window's times span
/// at most [`WINDOW_US`] (under 2^20 us), so two stable counting passes of 10 bits do it in
/// linear time. A span any wider (a caller's window longer than that) takes the comparison sort.
fn sort_by_time(instants: &mut Vec<Slot>, scratch: &mut Vec<Slot>) {
    const BITS: u32 = 10;
    let (lo, hi) = instants.iter().fold((u64::MAX, 0), |(lo, hi), &(t, _, _)| (lo.min(t), hi.max(t)));
    if instants.len() < 64 || hi - lo >= 1 << (2 * BITS) {
        instants.sort_unstable_by_key(|&(t, i, _)| (t, i));
        return;
    }
    scratch.clear();
    scratch.resize(instants.len(), (0, 0, 0));
    for pass in 0..2 {
        let digit = |t: u64| ((t - lo) >> (pass * BITS)) as usize & ((1 << BITS) - 1);
        let mut at = [0usize; 1 << BITS];
        for &(t, _, _) in instants.iter() {
            at[digit(t)] += 1;
        }
        let mut sum = 0;
        for a in at.iter_mut() {
            (*a, sum) = (sum, sum + *a);
        }
        for &x in instants.iter() {
            let d = digit(x.0);
            scratch[at[d]] = x;
            at[d] += 1;
        }
        std::mem::swap(instants, scratch);
    }
}

impl Simulation {
    /// Whether [`Self::run_windows`] may run up to `until`: several clients, no shared uplink
    /// (it couples the clients' sends), no scripted step due by then (a step may change the run's
    /// settings for every client), and endpoints built by [`crate::registry::make_peer`] (a
    /// caller's own, such as a wire tap writing one log for every client, may share state).
    pub(super) fn can_run_windows(&self, until: SimTime) -> bool {
        self.windowed
            && self.conns.len() > 1
            && !self.uplink_on
            && !self.conns.iter().flat_map(|c| &c.drivers).any(|d| d.next_script_step(until).is_some())
    }

    /// Runs every instant up to `until`, window by window (see the module docs); the events,
    /// the summary and the filter end as the instant-by-instant loop leaves them.
    pub(super) fn run_windows(&mut self, until: SimTime) {
        let mut w = std::mem::take(&mut self.windows);
        w.events.resize_with(self.conns.len(), Vec::new);
        let mut from = self.now;
        loop {
            let end = SimTime(from.0.saturating_add(WINDOW_US).min(until.0));
            self.run_window(end, &mut w);
            if end >= until {
                break;
            }
            from = end;
        }
        self.windows = w;
        // Every connection moved on: the due queue is built afresh when the one loop is next used.
        self.due.invalidate();
    }

    /// Runs each connection's instants up to and including `end`, then hands the events on in
    /// (time, client) order.
    fn run_window(&mut self, end: SimTime, w: &mut Windows) {
        w.instants.clear();
        let mut last = self.now;
        for (i, (c, events)) in self.conns.iter_mut().zip(&mut w.events).enumerate() {
            loop {
                let t = c.next_time();
                if t > end {
                    break;
                }
                let mark = events.len();
                let script = c.step_at(t, events, None);
                debug_assert!(!script.applied, "the windowed loop runs only while no script step is due");
                w.instants.push((t.0, i as u32, (events.len() - mark) as u32));
                last = last.max(t);
            }
            if c.client != FIRST_CLIENT {
                for e in events.iter_mut() {
                    e.client = c.client;
                }
            }
            // The summary folds each client apart: folded here, while the client's state is
            // still in the cache, it ends as when folded in the one loop's order.
            if self.fold_summary {
                self.summary.observe(events);
            }
        }
        self.now = last;
        if !self.keep_events {
            w.events.iter_mut().for_each(Vec::clear);
            return;
        }
        // A connection runs at most once per instant, so (time, index) keys are unique.
        sort_by_time(&mut w.instants, &mut w.scratch);
        let mark = self.events.len();
        let mut drains: Vec<_> = w.events.iter_mut().map(|e| e.drain(..)).collect();
        for &(_, i, n) in &w.instants {
            self.events.extend(drains[i as usize].by_ref().take(n as usize));
        }
        drop(drains);
        if self.filter_pass {
            self.filter.retain_from(&mut self.events, mark);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::{Action, ParamChange};
    use crate::link::{LinkPatch, LinkStep, StepDirection};
    use crate::scenario::{Scenario, Strategy};

    /// 12 clients in 3 groups: different links, one group at another send rate.
    fn twelve(seed: u64, strategy: Strategy) -> Scenario {
        let text = r#"(
            clients: [
                (count: 4, link: (latency_ms: 20, loss_percent: 1)),
                (count: 5, link: (latency_ms: 50, jitter_ms: 10, loss_percent: 8)),
                (count: 3, preset: "cable", set: [("send_rate_pps", "30")]),
            ],
        )"#;
        let opts = ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
        let base: Scenario = opts.from_str(text).unwrap();
        Scenario { seed, strategy, ..base }
    }

    /// Runs `s` in uneven steps with a live change on the way, windowed or instant by instant;
    /// every event and every client's summary.
    fn run(s: Scenario, windowed: bool, keep: bool) -> (Vec<Event>, Vec<String>) {
        let mut sim = Simulation::new(s);
        sim.windowed = windowed;
        sim.set_keep_events(keep);
        assert_eq!(sim.can_run_windows(SimTime(1_000_000)), windowed);
        let mut events = Vec::new();
        let mut t = 0;
        for (i, step_us) in
            [1, 6_999, 333_333, 1_000_000, 20_000, 19_999, 2, 1_500_000].into_iter().cycle().take(14).enumerate()
        {
            t += step_us;
            sim.run_until(SimTime(t));
            if i == 6 {
                sim.apply(&Action::Set(ParamChange::new("link.b_to_a.loss_percent", 12.0))).unwrap();
            }
            events.extend(sim.drain_events());
        }
        let summaries =
            (1..=sim.client_count()).map(|k| format!("{:?}", sim.summary().client(k).unwrap().finish())).collect();
        (events, summaries)
    }

    #[test]
    fn windows_make_the_same_events_and_summaries_as_the_instant_by_instant_loop() {
        for strategy in [Strategy::Glenn, Strategy::Ue4] {
            let s = twelve(11, strategy);
            let (a, sa) = run(s.clone(), true, true);
            let (b, sb) = run(s.clone(), false, true);
            assert!(a.len() > 20_000, "{}: {} events", strategy.name(), a.len());
            assert!(a == b, "{}: events differ", strategy.name());
            assert_eq!(sa, sb, "{}", strategy.name());
            // Kept or not, the summary folds the same.
            let (none, sn) = run(s, true, false);
            // Only the live change's report, which `apply` records outside any instant.
            assert!(
                none.iter().all(|e| matches!(e.kind, crate::event::EventKind::ParamChanged { .. })),
                "{:?}",
                none.first()
            );
            assert_eq!(sn, sb, "{}", strategy.name());
        }
    }

    #[test]
    fn instants_sorted_by_time_come_in_time_then_connection_order() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for (n, span) in [(10u32, 1_000_000u64), (1000, 1_000_000), (300, 1_048_575), (300, 1 << 21), (50, 3)] {
            // Connection by connection, each one's times rising, as the window pushes them.
            let mut instants = Vec::new();
            for i in 0..n {
                let mut t = 7_000_000;
                for _ in 0..(i % 9) {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    t += 1 + x % (span / 8).max(1);
                    if t - 7_000_000 > span {
                        break;
                    }
                    instants.push((t, i, (x % 5) as u32));
                }
            }
            let mut want = instants.clone();
            want.sort_unstable_by_key(|&(t, i, _)| (t, i));
            sort_by_time(&mut instants, &mut Vec::new());
            assert_eq!(instants, want, "{n} connections over {span} us");
        }
    }

    #[test]
    fn a_scripted_step_runs_its_instant_in_the_one_loop_and_the_events_stay_the_same() {
        let step = LinkStep {
            at_s: 2.5,
            dir: StepDirection::AToB,
            set: LinkPatch { latency_ms: Some(90.0), ..Default::default() },
        };
        let s = Scenario { script: vec![step.into()], ..twelve(4, Strategy::Glenn) };
        let (a, sa) = run(s.clone(), true, true);
        let (b, sb) = run(s, false, true);
        assert!(a.iter().any(|e| e.client == crate::event::RUN_WIDE), "the step is reported once for the run");
        assert!(a == b, "events differ");
        assert_eq!(sa, sb);
    }
}
