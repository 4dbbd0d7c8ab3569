//! Network condition presets: named one-way delay, jitter, loss and bandwidth figures that other
//! tools ship, applied to both link directions.
//!
//! They live in the protocol crate so a scenario can name one (a client group's `preset:
//! "home broadband"`, `client.K.preset`); the window's preset menu reads the same list.
//!
//! | name | delay ms | jitter ms | loss % | bandwidth down/up | source |
//! |---|---|---|---|---|---|
//! | LAN | 1 | 1 | 0 | - | Unity simulator presets |
//! | Fiber | 10 | 1 | 0 | - | Unity |
//! | Cable | 25 | 5 | 0 | - | Unity |
//! | DSL | 30 | 10 | 0 | - | Unity |
//! | Home broadband | 32 | 12 | 2 | - | Unity |
//! | Congested home | 50 | 50 | 1 | - | Unity |
//! | UE Average | 30-60 | (range) | 1 | - | Unreal NetEmulation profile |
//! | UE Bad | 100-200 | (range) | 5 | - | Unreal NetEmulation profile |
//! | 4G/LTE | 100 | 20 | 4 | - | Unity |
//! | 3G | 360 | 30 | 7 | - | Unity |
//! | 3G (Apple NLC) | 100 | - | 0 | 780 / 330 kbps | Network Link Conditioner |
//! | Edge (Apple NLC) | 400 / 440 | - | 0 | 240 / 200 kbps | Network Link Conditioner |
//! | Very Bad Network | 500 | - | 10 | 1000 / 1000 kbps | Network Link Conditioner |
//! | Unplayable | 300 | 400 | 30 | - | Unity |
//! | 100% Loss | - | - | 100 | - | Network Link Conditioner |
//!
//! "Unity" is the Unity Network Simulator's presets, "Unreal NetEmulation profile" the Average and
//! Bad profiles of Unreal Engine's packet simulation settings, "Network Link Conditioner" Apple's
//! Xcode tool. Where a source gives a range (Unreal's profiles) the midpoint is the latency and
//! half the range the jitter. Where it gives down/up figures, A is the server and B the client:
//! "down" is A->B. A jitter of "-" is 0; "100% Loss" keeps the default 50 ms delay.

use serde::{Deserialize, Serialize};

use super::LinkConfig;

/// One preset: per-direction one-way delay, jitter, loss and bandwidth (0 = unlimited).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preset {
    pub name: String,
    pub latency_ms: [f64; 2],
    pub jitter_ms: f64,
    pub loss_percent: f64,
    pub bandwidth_kbps: [f64; 2],
}

impl Preset {
    fn sym(name: &str, latency: f64, jitter: f64, loss: f64) -> Self {
        Self {
            name: name.into(),
            latency_ms: [latency; 2],
            jitter_ms: jitter,
            loss_percent: loss,
            bandwidth_kbps: [0.0; 2],
        }
    }

    /// Applies the preset to the A->B (`index` 0) or B->A (1) link, keeping other settings.
    pub fn apply(&self, index: usize, c: &mut LinkConfig) {
        let i = index.min(1);
        c.latency_ms = self.latency_ms[i];
        c.jitter_ms = self.jitter_ms;
        c.loss_percent = self.loss_percent;
        c.bandwidth_kbps = self.bandwidth_kbps[i];
        c.burst.p_percent = 0.0;
    }

    /// Applies the preset to both directions (A->B is "down", B->A "up").
    pub fn apply_both(&self, a_to_b: &mut LinkConfig, b_to_a: &mut LinkConfig) {
        self.apply(0, a_to_b);
        self.apply(1, b_to_a);
    }

    /// A preset holding the current link (for "save as custom preset").
    pub fn from_links(name: &str, ab: &LinkConfig, ba: &LinkConfig) -> Self {
        Self {
            name: name.into(),
            latency_ms: [ab.latency_ms, ba.latency_ms],
            jitter_ms: ab.jitter_ms,
            loss_percent: ab.loss_percent,
            bandwidth_kbps: [ab.bandwidth_kbps, ba.bandwidth_kbps],
        }
    }
}

/// The built-in presets, in the order of the table above.
pub fn builtin() -> Vec<Preset> {
    vec![
        Preset::sym("LAN", 1.0, 1.0, 0.0),
        Preset::sym("Fiber", 10.0, 1.0, 0.0),
        Preset::sym("Cable", 25.0, 5.0, 0.0),
        Preset::sym("DSL", 30.0, 10.0, 0.0),
        Preset::sym("Home broadband", 32.0, 12.0, 2.0),
        Preset::sym("Congested home", 50.0, 50.0, 1.0),
        Preset::sym("UE Average", 45.0, 15.0, 1.0),
        Preset::sym("UE Bad", 150.0, 50.0, 5.0),
        Preset::sym("4G/LTE", 100.0, 20.0, 4.0),
        Preset::sym("3G", 360.0, 30.0, 7.0),
        Preset { bandwidth_kbps: [780.0, 330.0], ..Preset::sym("3G (Apple NLC)", 100.0, 0.0, 0.0) },
        Preset {
            latency_ms: [400.0, 440.0],
            bandwidth_kbps: [240.0, 200.0],
            ..Preset::sym("Edge (Apple NLC)", 0.0, 0.0, 0.0)
        },
        Preset { bandwidth_kbps: [1000.0, 1000.0], ..Preset::sym("Very Bad Network", 500.0, 0.0, 10.0) },
        Preset::sym("Unplayable", 300.0, 400.0, 30.0),
        Preset::sym("100% Loss", 50.0, 0.0, 100.0),
    ]
}

/// The built-in preset called `name`, ignoring case and surrounding spaces (a scenario file may
/// write `"home broadband"` for "Home broadband").
pub fn find(name: &str) -> Option<Preset> {
    let name = name.trim();
    builtin().into_iter().find(|p| p.name.eq_ignore_ascii_case(name))
}

/// The built-in presets' names, for an error naming what is valid.
pub fn names() -> Vec<String> {
    builtin().into_iter().map(|p| p.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_found_by_name_in_any_case_and_set_each_direction() {
        let p = find(" home BROADBAND ").expect("found");
        assert_eq!(p.name, "Home broadband");
        assert!(find("dial-up").is_none());
        let nlc = find("3g (apple nlc)").unwrap();
        let (mut down, mut up) = (LinkConfig::default(), LinkConfig::default());
        down.burst.p_percent = 3.0;
        nlc.apply_both(&mut down, &mut up);
        assert_eq!((down.bandwidth_kbps, up.bandwidth_kbps, down.latency_ms), (780.0, 330.0, 100.0));
        assert_eq!(down.burst.p_percent, 0.0, "a preset replaces bursts");
        assert_eq!(down.mtu_bytes, LinkConfig::default().mtu_bytes, "other settings stay");
    }
}
