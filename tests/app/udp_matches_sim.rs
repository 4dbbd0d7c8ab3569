//! One driver, two transports: the same scenario and seed in the simulation and over loopback UDP
//! (`UdpRun`, both endpoints in this process, the link applied at the receiver) meet the same
//! per-packet link decisions and the same flow-control switches; and live `flow.*` edits work
//! over UDP.
//!
//! Real time is involved on the UDP side: a thread that wakes too late can deliver a datagram after
//! its simulated instant or skip send ticks, after which the runs may part ways. So sends are
//! compared where both runs sent a side's n-th datagram at the same instant, and there every
//! decision must agree; most sends must be comparable.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use ackscope::runtime::udp::UdpRun;
use ackscope::runtime::Lanes;
use ackscope_protocol::{
    Action, DropReason, Event, EventKind, LinkPatch, LinkStep, ParamChange, Scenario, Side, SimTime, Simulation,
    StepDirection, Strategy,
};

/// Runs `scenario` over loopback UDP for `secs` of real time; every event, and the changes.
fn udp_events(scenario: Scenario, secs: f64, mut at: impl FnMut(f64, &UdpRun)) -> Vec<Event> {
    let mut run = UdpRun::spawn(scenario, "127.0.0.1:0".parse().unwrap(), "127.0.0.1:0".parse().unwrap(), || {})
        .expect("spawn UDP run");
    let start = Instant::now();
    let until = start + Duration::from_secs_f64(secs);
    let mut events = Vec::new();
    while Instant::now() < until {
        at(start.elapsed().as_secs_f64(), &run);
        if let Some(b) = run.recv_batch_timeout(Duration::from_millis(10)) {
            events.extend(b.events);
        }
    }
    run.stop();
    events.extend(run.try_batches().flat_map(|b| b.events));
    events
}

fn sim_events(scenario: Scenario, secs: f64) -> Vec<Event> {
    let mut sim = Simulation::new(scenario);
    sim.run_for_secs(secs);
    sim.drain_events().collect()
}

/// What the link did with one send.
#[derive(Debug, Clone, Default, PartialEq)]
struct Fate {
    dropped: Option<DropReason>,
    /// Delay of every copy delivered, sorted.
    delays_us: Vec<u32>,
    duplicated: bool,
}

/// Each side's sends in order: (send instant, what the link did with it).
fn fates(events: &[Event]) -> [Vec<(SimTime, Fate)>; 2] {
    let mut out: [Vec<(SimTime, Fate)>; 2] = Default::default();
    let mut by_uid: HashMap<u64, (usize, usize)> = HashMap::new();
    for e in events {
        if let EventKind::PacketSent { side, uid, .. } = e.kind {
            let sends = &mut out[side.index()];
            by_uid.insert(uid, (side.index(), sends.len()));
            sends.push((e.time, Fate::default()));
        }
    }
    // Link events come from the receiving endpoint's thread over UDP: a second pass.
    for e in events {
        let uid = match e.kind {
            EventKind::LinkDropped { uid, .. }
            | EventKind::LinkDelivered { uid, .. }
            | EventKind::LinkDuplicated { uid, .. } => uid,
            _ => continue,
        };
        let Some(&(side, n)) = by_uid.get(&uid) else { continue };
        let fate = &mut out[side][n].1;
        match e.kind {
            EventKind::LinkDropped { reason, .. } => fate.dropped = Some(reason),
            EventKind::LinkDelivered { delay_us, .. } => fate.delays_us.push(delay_us),
            _ => fate.duplicated = true,
        }
    }
    for side in &mut out {
        for (_, f) in side.iter_mut() {
            f.delays_us.sort_unstable();
        }
    }
    out
}

#[test]
fn udp_and_the_simulation_make_the_same_link_decision_for_each_send() {
    let seed = 31;
    let mut sc = Scenario { seed, strategy: Strategy::Glenn, ..Scenario::default() };
    sc.link.a_to_b.latency_ms = 40.0;
    sc.link.a_to_b.jitter_ms = 8.0;
    sc.link.a_to_b.loss_percent = 8.0;
    sc.link.a_to_b.duplicate_percent = 4.0;
    sc.link.a_to_b.burst.p_percent = 3.0;
    sc.link.a_to_b.burst.r_percent = 25.0;
    sc.link.b_to_a = sc.link.a_to_b;
    // Asymmetric, so a direction mix-up shows.
    sc.link.b_to_a.latency_ms = 30.0;
    sc.link.b_to_a.loss_percent = 12.0;
    let secs = 3.5;
    let horizon = SimTime::from_secs_f64(2.8);
    let sim = fates(&sim_events(sc.clone(), secs));
    let udp = fates(&udp_events(sc, secs, |_, _| {}));

    let mut seen = Fate::default();
    let mut reasons = Vec::new();
    for side in Side::BOTH {
        let (s, u) = (&sim[side.index()], &udp[side.index()]);
        let due = s.iter().filter(|(t, _)| *t <= horizon).count();
        let mut compared = 0;
        for (n, ((ts, fs), (tu, fu))) in s.iter().zip(u).enumerate() {
            if ts != tu || *ts > horizon {
                continue;
            }
            assert_eq!(fs, fu, "seed {seed}: {side:?}'s send {n} at {ts:?}: simulated vs UDP");
            compared += 1;
            seen.duplicated |= fs.duplicated;
            reasons.extend(fs.dropped);
        }
        eprintln!("seed {seed} {side:?}: {compared} of {due} sends compared");
        assert!(compared * 10 >= due * 7, "seed {seed} {side:?}: only {compared} of {due} sends comparable");
    }
    // The comparison covered every kind of decision.
    assert!(seen.duplicated, "seed {seed}: a duplicate among the compared sends");
    for r in [DropReason::Random, DropReason::Burst] {
        assert!(reasons.contains(&r), "seed {seed}: a {r:?} drop among the compared sends");
    }
}

/// Each side's flow-control switches: (time, good).
fn flow_modes(events: &[Event]) -> [Vec<(SimTime, bool)>; 2] {
    let mut out: [Vec<(SimTime, bool)>; 2] = Default::default();
    for e in events {
        if let EventKind::FlowMode { side, good, .. } = e.kind {
            out[side.index()].push((e.time, good));
        }
    }
    out
}

#[test]
fn flow_control_switches_the_same_way_over_udp_as_simulated() {
    let seed = 17;
    let mut sc = Scenario { seed, strategy: Strategy::Acks, ..Scenario::default() };
    sc.flow.enabled = true;
    sc.ack.stats.rtt_smoothing = 0.2;
    sc.link.a_to_b.latency_ms = 50.0;
    sc.link.a_to_b.loss_percent = 0.0;
    sc.link.b_to_a = sc.link.a_to_b;
    // RTT 100 ms, then 400 ms (over the 250 ms threshold), then 100 ms again.
    let latency = |at_s, ms| LinkStep {
        at_s,
        dir: StepDirection::Both,
        set: LinkPatch { latency_ms: Some(ms), ..LinkPatch::default() },
    };
    sc.script = vec![latency(0.8, 200.0).into(), latency(2.0, 50.0).into()];
    let secs = 4.0;
    let sim = flow_modes(&sim_events(sc.clone(), secs));
    let udp = flow_modes(&udp_events(sc, secs, |_, _| {}));
    let interval = SimTime::from_millis_f64(100.0);
    for side in Side::BOTH {
        let (s, u) = (&sim[side.index()], &udp[side.index()]);
        let ctx = format!("seed {seed} {side:?}: simulated {s:?}, UDP {u:?}");
        assert_eq!(s.iter().map(|m| m.1).collect::<Vec<_>>(), vec![false, true], "{ctx}");
        assert_eq!(u.iter().map(|m| m.1).collect::<Vec<_>>(), vec![false, true], "{ctx}");
        for ((ts, _), (tu, _)) in s.iter().zip(u) {
            assert!(ts.0.abs_diff(tu.0) <= interval.0, "{ctx}");
        }
    }
}

/// Send instants of `side` in `[from, to)`.
fn sends(events: &[Event], side: Side, from: SimTime, to: SimTime) -> usize {
    events
        .iter()
        .filter(|e| e.time >= from && e.time < to)
        .filter(|e| matches!(e.kind, EventKind::PacketSent { side: s, .. } if s == side))
        .count()
}

#[test]
fn a_live_flow_edit_over_udp_switches_the_rate_and_turning_it_off_restores_the_configured_rate() {
    let seed = 9;
    let mut sc = Scenario { seed, strategy: Strategy::Acks, send_rate_pps: 60.0, ..Scenario::default() };
    // RTT 400 ms: "bad" for the 250 ms threshold as soon as flow control looks.
    sc.link.a_to_b.latency_ms = 200.0;
    sc.link.a_to_b.loss_percent = 0.0;
    sc.link.b_to_a = sc.link.a_to_b;
    let set = |value: &str| Action::Set(ParamChange::parse("flow.enabled", value));
    let (mut on, mut off) = (false, false);
    let events = udp_events(sc, 3.2, |t, run| {
        if t >= 0.8 && !on {
            on = run.send(Lanes::All, set("true"));
        }
        if t >= 2.2 && !off {
            off = run.send(Lanes::All, set("false"));
        }
    });
    assert!(on && off, "both changes sent");
    let changes: Vec<(SimTime, String)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ParamChanged { name, value } if name == "flow.enabled" => Some((e.time, value.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(changes.iter().map(|c| c.1.as_str()).collect::<Vec<_>>(), ["true", "false"], "seed {seed}");
    let (t_on, t_off) = (changes[0].0, changes[1].0);
    let modes = flow_modes(&events);
    let ms = |t: SimTime, ms: u64| t.plus_micros(ms * 1000);
    for side in Side::BOTH {
        let ctx = format!("seed {seed} {side:?}: on at {t_on:?}, off at {t_off:?}, modes {:?}", modes[side.index()]);
        // Flow control took over: bad mode at its first stats sample, 10 pps from then on.
        let bad = modes[side.index()].first().copied();
        assert!(matches!(bad, Some((t, false)) if t >= t_on && t <= ms(t_on, 250)), "{ctx}");
        let n = sends(&events, side, ms(t_on, 300), ms(t_on, 1300));
        assert!((9..=11).contains(&n), "{n} sends in a second of bad mode; {ctx}");
        // Off again: the configured 60 pps.
        let n = sends(&events, side, ms(t_off, 100), ms(t_off, 600));
        assert!((29..=31).contains(&n), "{n} sends in half a second after flow control went off; {ctx}");
    }
}
