//! Window settings that persist between sessions, and how the window starts.

use std::ops::RangeInclusive;
use std::path::PathBuf;

use ackscope_protocol::Strategy;
use serde::{Deserialize, Serialize};

use super::tab::Tab;
use crate::model::limits::LiveLimits;
use crate::params::presets::Preset;

/// How the window starts (command-line options).
#[derive(Debug, Clone, Default)]
pub struct Launch {
    pub path: Option<PathBuf>,
    pub tab: Option<Tab>,
    pub ab: Option<Strategy>,
    pub no_intro: bool,
    /// `--theme`: dark (`true`) or light for this start, so screenshots can be scripted.
    pub dark: Option<bool>,
    /// `--compare-with`: a second recording shown beside the first in Compare and Summary.
    pub compare_with: Option<PathBuf>,
}

/// Settings that persist between sessions of the app.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    pub dark: bool,
    pub recent: Vec<PathBuf>,
    pub custom_presets: Vec<Preset>,
    pub intro_dismissed: bool,
    pub tab: Tab,
    /// Run time a live run keeps in memory, in minutes ([`LIVE_WINDOW_MIN`]).
    pub live_window_min: f64,
    /// Memory a live run's recordings take at most, in MiB ([`LIVE_MAX_MIB`]).
    pub live_max_mib: u64,
}

/// Valid live windows in minutes: at least a minute to look back on, at most a day.
///
/// The live limits are the window's, not a scenario's: they stay out of the parameter table
/// (which feeds `--set` and scenario files) and keep their ranges here, beside the field.
pub const LIVE_WINDOW_MIN: RangeInclusive<f64> = 1.0..=1440.0;
/// Valid memory caps in MiB: 256 MiB holds about a minute at 1000 packets/s each way; 64 GiB is
/// more than these machines have.
pub const LIVE_MAX_MIB: RangeInclusive<u64> = 256..=65536;

impl Default for Settings {
    fn default() -> Self {
        let live = LiveLimits::default();
        Self {
            dark: true,
            recent: Vec::new(),
            custom_presets: Vec::new(),
            intro_dismissed: false,
            tab: Tab::Overview,
            live_window_min: live.window_s / 60.0,
            live_max_mib: live.max_bytes >> 20,
        }
    }
}

impl Settings {
    /// The live limits these settings ask for, each brought into its range (a hand-edited or
    /// older settings file may hold anything; NaN is the default).
    pub fn live_limits(&self) -> LiveLimits {
        let window_min = if self.live_window_min.is_nan() {
            LiveLimits::default().window_s / 60.0
        } else {
            self.live_window_min.clamp(*LIVE_WINDOW_MIN.start(), *LIVE_WINDOW_MIN.end())
        };
        let max_mib = self.live_max_mib.clamp(*LIVE_MAX_MIB.start(), *LIVE_MAX_MIB.end());
        LiveLimits { window_s: window_min * 60.0, max_bytes: max_mib << 20 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_saved_by_earlier_versions_still_load() {
        let old = "(dark:false,recent:[\"/tmp/a.ron\"],custom_presets:[],intro_dismissed:true,tab:Messages)";
        let s: Settings = ron::from_str(old).unwrap();
        assert_eq!((s.tab, s.dark, s.recent.len()), (Tab::Messages, false, 1));
        let text = ron::to_string(&Settings { tab: Tab::Summary, ..Settings::default() }).unwrap();
        assert!(text.contains("tab:Summary"), "{text}");
        assert_eq!(ron::from_str::<Settings>(&text).unwrap().tab, Tab::Summary);
        assert_eq!(s.live_limits(), LiveLimits::default(), "no live limits saved: the defaults");
    }

    #[test]
    fn live_limits_persist_and_are_brought_into_their_ranges() {
        let s = Settings { live_window_min: 10.0, live_max_mib: 512, ..Settings::default() };
        let back: Settings = ron::from_str(&ron::to_string(&s).unwrap()).unwrap();
        assert_eq!(back.live_limits(), LiveLimits { window_s: 600.0, max_bytes: 512 << 20 });
        let wild: Settings = ron::from_str("(live_window_min:0.01,live_max_mib:1)").unwrap();
        assert_eq!(wild.live_limits(), LiveLimits { window_s: 60.0, max_bytes: 256 << 20 });
        let huge = Settings { live_window_min: f64::INFINITY, live_max_mib: u64::MAX, ..Settings::default() };
        assert_eq!(huge.live_limits(), LiveLimits { window_s: 1440.0 * 60.0, max_bytes: 65536 << 20 });
        let nan = Settings { live_window_min: f64::NAN, ..Settings::default() };
        assert_eq!(nan.live_limits().window_s, 1800.0);
    }
}
