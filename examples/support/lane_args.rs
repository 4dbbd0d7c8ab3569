//! The command line of the examples that time one recorded lane (pcapng_export, reencode_bench):
//! `--secs S --strategy NAME --pps N`, and the lossy scenario they all run, so their figures are
//! measured on the same recording.

use ackscope_protocol::{Dir, Scenario, Strategy};

/// What the run is: its length, strategy and send rate.
pub struct LaneArgs {
    pub secs: f64,
    pub pps: f64,
    pub strategy: Strategy,
}

impl LaneArgs {
    /// The process's arguments, `default_secs` when `--secs` is not given (glenn at 60 pps
    /// otherwise); a bad value stops the example naming the flag.
    pub fn from_env(default_secs: f64) -> Self {
        let args: Vec<String> = std::env::args().collect();
        let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
        let secs: f64 = arg("--secs").map_or(default_secs, |s| s.parse().expect("--secs SECONDS"));
        let pps: f64 = arg("--pps").map_or(60.0, |s| s.parse().expect("--pps PACKETS_PER_SECOND"));
        let strategy = arg("--strategy").map_or(Strategy::Glenn, |n| {
            Strategy::all().find(|s| s.name() == n).unwrap_or_else(|| panic!("unknown strategy {n}"))
        });
        Self { secs, pps, strategy }
    }

    /// The scenario timed: the strategy at `pps` over 5 % loss and 10 ms jitter each way, seed 3.
    pub fn scenario(&self) -> Scenario {
        let mut s = Scenario { strategy: self.strategy, send_rate_pps: self.pps, seed: 3, ..Scenario::default() };
        for d in Dir::BOTH {
            s.link.get_mut(d).loss_percent = 5.0;
            s.link.get_mut(d).jitter_ms = 10.0;
        }
        s
    }
}
