//! Which tab of the central area is shown: the one list of the tabs' names ([`TABS`]), read by
//! the tab bar, the `--tab` option ([`Tab::parse`]) and the persisted settings.
//!
//! The tab shown is application state (settings persist it, commands change it), so it lives
//! here below the views; the views keep the registry of panels that draw each tab
//! (`ui::tabs::Panels`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A tab of the central area.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tab {
    #[default]
    Overview,
    Messages,
    Slices,
    Packets,
    Anomalies,
    Summary,
    Compare,
    Tune,
    Clients,
}

/// Every tab with its name, in tab-bar order: the only place a tab is named.
pub const TABS: [(Tab, &str); 9] = [
    (Tab::Overview, "Overview"),
    (Tab::Clients, "Clients"),
    (Tab::Messages, "Messages"),
    (Tab::Slices, "Slices"),
    (Tab::Packets, "Packets"),
    (Tab::Anomalies, "Anomalies"),
    (Tab::Summary, "Summary"),
    (Tab::Compare, "Compare"),
    (Tab::Tune, "Tune"),
];

impl Tab {
    /// The tab's name as the tab bar shows it.
    pub fn name(self) -> &'static str {
        TABS.iter().find(|(t, _)| *t == self).map_or("", |(_, n)| n)
    }

    /// A tab by its name, in any case (`--tab messages`).
    pub fn parse(name: &str) -> Option<Tab> {
        TABS.iter().find(|(_, n)| n.eq_ignore_ascii_case(name.trim())).map(|(t, _)| *t)
    }

    /// Every tab, in tab-bar order.
    pub fn all() -> impl Iterator<Item = Tab> {
        TABS.iter().map(|(t, _)| *t)
    }
}

/// The tab names in order, as serde wants them.
const TAB_NAMES: [&str; TABS.len()] = {
    let mut names = [""; TABS.len()];
    let mut i = 0;
    while i < TABS.len() {
        names[i] = TABS[i].1;
        i += 1;
    }
    names
};

/// Settings store a tab by its name, as a unit variant (the form earlier versions' derive wrote).
impl Serialize for Tab {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let i = TABS.iter().position(|(t, _)| t == self).unwrap_or(0);
        s.serialize_unit_variant("Tab", i as u32, TAB_NAMES[i])
    }
}

impl<'de> Deserialize<'de> for Tab {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Named;
        impl<'de> serde::de::Visitor<'de> for Named {
            type Value = Tab;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(f, "a tab: {}", TAB_NAMES.join(", "))
            }
            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Tab, E> {
                Tab::parse(name).ok_or_else(|| E::unknown_variant(name, &TAB_NAMES))
            }
            fn visit_enum<A: serde::de::EnumAccess<'de>>(self, data: A) -> Result<Tab, A::Error> {
                use serde::de::VariantAccess;
                let (tab, variant) = data.variant_seed(NamedSeed)?;
                variant.unit_variant()?;
                Ok(tab)
            }
        }
        /// Reads a variant's name as an identifier (what formats such as RON write for it).
        struct NamedSeed;
        impl<'de> serde::de::DeserializeSeed<'de> for NamedSeed {
            type Value = Tab;
            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Tab, D::Error> {
                d.deserialize_identifier(Named)
            }
        }
        d.deserialize_enum("Tab", &TAB_NAMES, Named)
    }
}
