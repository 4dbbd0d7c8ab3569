//! Every strategy's loss estimate beside the link's drops and the effective truth (drops + the
//! packets the receiver discarded unacked), under the conditions that set them apart: jitter that
//! reorders, explicit reordering, duplicates and a bandwidth cap at half the send rate.
//!
//! `cargo run -p ackscope-protocol --release --example loss_truths [SECONDS] [SEED]` (defaults 60
//! and 1). The short forms are `cargo test -p ackscope-protocol --test protocol loss_truths::`.

#[path = "../tests/protocol/support/truths.rs"]
mod truths;

fn main() {
    let mut args = std::env::args().skip(1);
    let seconds: f64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(60.0);
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    println!("{seconds} s per run, seed {seed}, 5 % random loss each way unless the condition says otherwise");
    println!(
        "{:<10} {:<26} {:>9} {:>9} {:>10} {:>7}  discarded",
        "strategy", "condition", "estimate", "true %", "effective", "diff"
    );
    for condition in truths::Condition::ALL {
        for strategy in truths::STRATEGIES {
            let r = truths::measure(strategy, condition, seconds, seed);
            let est = r.estimate.map_or("-".to_string(), |e| format!("{e:.2}"));
            let diff = r.estimate.map_or("-".to_string(), |e| format!("{:+.2}", e - r.effective));
            println!(
                "{:<10} {:<26} {:>9} {:>9.2} {:>10.2} {:>7}  {}",
                strategy.name(),
                condition.label(),
                est,
                r.true_loss,
                r.effective,
                diff,
                r.discards
            );
        }
    }
}
