//! Window settings that persist between sessions, and how the window starts.

use std::path::PathBuf;

use ackscope_protocol::Strategy;
use serde::{Deserialize, Serialize};

use super::tab::Tab;
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
}

impl Default for Settings {
    fn default() -> Self {
        Self { dark: true, recent: Vec::new(), custom_presets: Vec::new(), intro_dismissed: false, tab: Tab::Overview }
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
    }
}
