//! Tick phases take the knife-edge out of latency sweeps.
//!
//! With both endpoints ticking at the same instants, a packet sent on a tick arrives exactly on a
//! tick of the peer whenever the one-way latency is a multiple of the tick interval (50 ms = 3
//! ticks at 60 packets/s). Just below, the ack leaves at once; just above, it waits a whole tick,
//! and Glenn's fixed 100 ms resend fires before it comes back: sends per message jump from about
//! 1.1 to 2 between 50.0 and 50.1 ms. With each side's phase drawn from the seed, the wait for the
//! peer's next tick differs per seed, and with each tick up to 1 ms late (as a real timer wakes),
//! whether the ack makes the resend tick is a matter of degree, not a cliff: the figures change
//! smoothly with latency.

use crate::support::run_drained;
use ackscope_protocol::*;

const SEEDS: [u64; 3] = [1, 2, 3];
const SECONDS: f64 = 120.0;

/// Glenn with its default fixed 100 ms resend, default workload, `latency_ms` one-way each way.
fn scenario(seed: u64, latency_ms: f64, tick_phase: TickPhase) -> Scenario {
    let mut s = Scenario { seed, strategy: Strategy::Glenn, tick_phase, ..Scenario::default() };
    for d in Dir::BOTH {
        s.link.get_mut(d).latency_ms = latency_ms;
    }
    s
}

/// Mean sends per reliable message over `seeds`, each run drained.
fn mean_sends_per_message(seeds: &[u64], latency_ms: f64, edit: impl Fn(&mut Scenario)) -> f64 {
    let total: f64 = seeds
        .iter()
        .map(|&seed| {
            let mut s = scenario(seed, latency_ms, TickPhase::Seeded);
            edit(&mut s);
            run_drained(s, SECONDS, 10.0, |_| {}).metrics.sends_per_message
        })
        .sum();
    total / seeds.len() as f64
}

fn sends_per_message(latency_ms: f64, tick_phase: TickPhase) -> f64 {
    mean_sends_per_message(&SEEDS, latency_ms, |s| s.tick_phase = tick_phase)
}

/// The largest change between neighbours.
fn largest_step(values: &[f64]) -> f64 {
    values.windows(2).map(|w| (w[1] - w[0]).abs()).fold(0.0, f64::max)
}

/// `f` over `items` on two threads (the runs are independent), results in order.
fn on_two_threads<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let (first, second) = items.split_at(items.len() / 2);
    std::thread::scope(|s| {
        let h = s.spawn(|| first.iter().map(&f).collect::<Vec<R>>());
        let mut out: Vec<R> = second.iter().map(&f).collect();
        let mut all = h.join().expect("sweep thread");
        all.append(&mut out);
        all
    })
}

#[test]
fn sends_per_message_change_smoothly_with_latency_under_seeded_phases() {
    let latencies: Vec<f64> = (490..=510).map(|t| t as f64 / 10.0).collect();
    let spm = on_two_threads(&latencies, |l| sends_per_message(*l, TickPhase::Seeded));
    let table: Vec<String> = latencies.iter().zip(&spm).map(|(l, s)| format!("{l:.1} ms: {s:.3}")).collect();
    eprintln!("seeds {SEEDS:?}, seeded phases, sends per message:\n  {}", table.join("\n  "));
    for (w, l) in spm.windows(2).zip(&latencies) {
        let step = (w[1] - w[0]).abs();
        assert!(
            step <= 0.15,
            "seeds {SEEDS:?}: sends per message {:.3} -> {:.3} from {l:.1} ms to {:.1} ms",
            w[0],
            w[1],
            l + 0.1
        );
    }
}

#[test]
fn lock_step_ticks_jump_between_50_0_and_50_1_ms() {
    let spm = on_two_threads(&[50.0, 50.1], |l| sends_per_message(*l, TickPhase::Lockstep));
    eprintln!("seeds {SEEDS:?}, lock-step, sends per message: 50.0 ms {:.3}, 50.1 ms {:.3}", spm[0], spm[1]);
    assert!(spm[1] - spm[0] > 0.5, "seeds {SEEDS:?}: lock-step {:.3} -> {:.3} does not jump", spm[0], spm[1]);
}

/// Why ticks wake late: a phase alone moves the cliff to a latency of its own per seed. Seed 9's
/// phases put it between 49 and 50 ms (about one seed in eight has it in that millisecond): with
/// exact ticks that seed jumps by about 0.9 there; with ticks up to 1 ms late it ramps.
#[test]
fn a_seeds_own_edge_is_a_cliff_with_exact_ticks_and_a_ramp_with_late_ones() {
    let seed = 9;
    let latencies: Vec<f64> = (490..=500).map(|t| t as f64 / 10.0).collect();
    let sweep = |late_ms: f64| -> Vec<f64> {
        on_two_threads(&latencies, |l| mean_sends_per_message(&[seed], *l, |s| s.tick_jitter_ms = late_ms))
    };
    let (exact, late) = (sweep(0.0), sweep(1.0));
    eprintln!("seed {seed}, 49.0..50.0 ms: exact ticks {exact:.3?}\n  late ticks {late:.3?}");
    assert!(largest_step(&exact) > 0.5, "seed {seed}: exact ticks {exact:.3?} have no cliff here");
    assert!(largest_step(&late) <= 0.15, "seed {seed}: late ticks {late:.3?} still jump");
}
