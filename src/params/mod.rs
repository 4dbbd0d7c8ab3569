//! Scenario parameters by dotted name: one table ([`table::PARAMS`], grouped by
//! [`table::GROUPS`]) with every settable parameter's name, label, unit, valid range and help,
//! read by the window's controls, by `--set` (which refuses values outside the range), by the
//! check of every loaded scenario and session ([`validate`]) and by README's parameter list
//! ([`markdown`]); the `--set` text edge ([`overrides`]); the file edge (scenario and session
//! text read strictly, [`strict`]; the settings that name a file, [`link_file`]); link presets
//! ([`presets`]); and the [`Catalog`] the window's panels are drawn from (registry rows and table
//! rows, as data).
//!
//! Keeping name, range and help in one row means the slider, the command line and the docs can
//! never disagree about them. A parameter is named by its dotted name (the row's `name`; `link.X`
//! rows also answer for `link.a_to_b.X` and `link.b_to_a.X`) and its value is a typed
//! [`ParamValue`] of the row's [`Kind`]: a change is a [`ParamChange`], checked here against the
//! row ([`check`]) and written into the scenario's typed field by the protocol
//! ([`Scenario::apply_change`]); text is read only at the edges ([`overrides`], files).

pub mod catalog;
pub mod false_acks;
pub mod link_file;
pub mod overrides;
pub mod presets;
pub mod strict;
pub mod table;
#[cfg(test)]
mod tests;
pub mod validate;

use ackscope_protocol::{ParamChange, ParamValue, Scenario};
use anyhow::anyhow;

pub use catalog::Catalog;
use link_file::{LINK_FILE, LINK_TRACE};
pub use table::{GROUPS, PARAMS};

/// What values a parameter takes.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// A number in `min..=max`; `integer` takes whole numbers only; `log` makes its slider
    /// logarithmic.
    Number {
        min: f64,
        max: f64,
        integer: bool,
        log: bool,
    },
    /// Either unset (`null`) or a number in `min..=max` (a setting that otherwise comes from
    /// elsewhere, such as a side's own tick phase).
    OptionalNumber {
        min: f64,
        max: f64,
    },
    Bool,
    /// One of these names.
    Choice(fn() -> Vec<&'static str>),
    /// Any whole number the field holds (checked by the scenario's deserializer).
    AnyInteger,
    /// A file's path, read when the run starts (`link.trace`) or when set (`link.file`).
    Path,
}

/// One settable parameter.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// The dotted `--set` name (`link.X` sets both directions; see [`find`]).
    pub name: &'static str,
    /// The control's label in the window.
    pub label: &'static str,
    pub unit: &'static str,
    pub kind: Kind,
    /// What it does (the control's tooltip and README's description).
    pub tip: &'static str,
}

impl Param {
    /// The range of a number parameter.
    pub fn range(&self) -> Option<std::ops::RangeInclusive<f64>> {
        match self.kind {
            Kind::Number { min, max, .. } | Kind::OptionalNumber { min, max } => Some(min..=max),
            _ => None,
        }
    }

    /// Refuses `value` for `name` (this parameter, maybe under a per-direction or per-strategy
    /// name) when it is a number that is not finite, out of range, or not whole for a parameter
    /// of whole numbers. A value of another kind ("fast" for a number) is the protocol's to
    /// refuse, by the field's type ([`Scenario::apply_change`]).
    pub fn accepts(&self, name: &str, value: &ParamValue) -> anyhow::Result<()> {
        let (min, max, integer) = match self.kind {
            Kind::Number { min, max, integer, .. } => (min, max, integer),
            Kind::OptionalNumber { min, max } => (min, max, false),
            _ => return Ok(()),
        };
        match value.as_f64() {
            Some(v) => self.check_number(name, v, &value.to_string(), min, max, integer),
            None => Ok(()),
        }
    }

    /// [`Self::accepts`] for a value written as text (`--vary`'s values): the value as `--set`
    /// takes it when it is a number (`1e6` comes back as `1000000`), `None` for other text.
    pub fn check(&self, name: &str, raw: &str) -> anyhow::Result<Option<String>> {
        let value = ParamValue::parse(raw);
        self.accepts(name, &value)?;
        Ok(value.as_f64().is_some().then(|| value.to_string()))
    }

    /// Refuses `v` (written `raw`) unless it is finite, in `min..=max` and, for an integer
    /// parameter, whole.
    fn check_number(&self, name: &str, v: f64, raw: &str, min: f64, max: f64, integer: bool) -> anyhow::Result<()> {
        let unit = if self.unit.is_empty() { String::new() } else { format!(" {}", self.unit) };
        if !v.is_finite() {
            anyhow::bail!("'{name}' must be a finite number from {min} to {max}{unit}, got {raw}");
        }
        if v < min || v > max {
            anyhow::bail!("'{name}' = {raw} is out of range: valid from {min} to {max}{unit}");
        }
        if integer && v.fract() != 0.0 {
            anyhow::bail!("'{name}' takes whole numbers from {min} to {max}{unit}, got {raw}");
        }
        Ok(())
    }

    /// Refuses a value a scenario holds for `name` that is not in this parameter's range (a
    /// number that is NaN or infinite included); other kinds are the deserializer's business.
    pub fn check_value(&self, name: &str, v: Option<f64>) -> anyhow::Result<()> {
        match (self.kind, v) {
            (Kind::Number { min, max, integer, .. }, Some(v)) => {
                self.check_number(name, v, &v.to_string(), min, max, integer)
            }
            (Kind::OptionalNumber { min, max }, Some(v)) => self.check_number(name, v, &v.to_string(), min, max, false),
            (Kind::Number { .. }, None) => anyhow::bail!("'{name}' must be a number"),
            _ => Ok(()),
        }
    }

    /// The values it takes, as README shows them.
    pub fn values_text(&self) -> String {
        match self.kind {
            Kind::Number { min, max, .. } => format!("{min} - {max}"),
            Kind::OptionalNumber { min, max } => format!("unset, or {min} - {max}"),
            Kind::Bool => "true, false".into(),
            Kind::Choice(names) => names().join(", "),
            Kind::AnyInteger => "any whole number".into(),
            Kind::Path => "a file path".into(),
        }
    }
}

/// The row for a dotted name: `link.a_to_b.X` and `link.b_to_a.X` find `link.X`, the
/// estimator settings of `dnm.stats.X` and `rellikt.stats.X` find `ack.stats.X`, and a client's
/// own `client.K.X` finds `X`.
pub fn find(name: &str) -> Option<&'static Param> {
    find_in(PARAMS, name)
}

/// [`find`] among `rows`.
pub fn find_in<'a>(rows: impl IntoIterator<Item = &'a Param>, name: &str) -> Option<&'a Param> {
    let base = row_name(name);
    rows.into_iter().find(|p| p.name == base)
}

/// The name of the row that answers for `name` (see [`find`]).
fn row_name(name: &str) -> String {
    let name = name.trim();
    let name = match ackscope_protocol::scenario::clients::parse_client_name(name) {
        Some((Ok(_), rest)) => rest,
        _ => name,
    };
    if let Some(rest) = name.strip_prefix("link.a_to_b.").or_else(|| name.strip_prefix("link.b_to_a.")) {
        format!("link.{rest}")
    } else if let Some(rest) = name.strip_prefix("dnm.stats.").or_else(|| name.strip_prefix("rellikt.stats.")) {
        format!("ack.stats.{rest}")
    } else {
        name.to_string()
    }
}

/// The row for `name`, which must be in the table (the window's controls name theirs literally).
pub fn get(name: &str) -> &'static Param {
    find(name).unwrap_or_else(|| panic!("parameter '{name}' is not in the table"))
}

/// The table as Markdown, as README's "Parameters" section holds it.
pub fn markdown() -> String {
    markdown_of(PARAMS)
}

/// `rows` as README's "Parameters" section lists them.
pub fn markdown_of<'a>(rows: impl IntoIterator<Item = &'a Param>) -> String {
    let mut s = String::from("| name | values | unit | what it does |\n|---|---|---|---|\n");
    for p in rows {
        s += &format!("| `{}` | {} | {} | {} |\n", p.name, p.values_text(), p.unit, p.tip);
    }
    s
}

/// Refuses `change` when its value is outside its parameter's row (range, whole numbers); a
/// name without a row is the protocol's to refuse ([`Scenario::apply_change`]).
pub fn check(change: &ParamChange) -> anyhow::Result<()> {
    match find(change.name()) {
        Some(p) => p.accepts(change.name(), change.value()),
        None => Ok(()),
    }
}

/// Refuses a change of `link.trace` or `link.file` during a run: the trace is read when a run
/// starts, and a link file is a set of ordinary `link.X` changes, which the window makes one by
/// one ([`link_file`]). Every live change and every `set` step of a script is checked by it.
pub fn refuse_during_run(name: &str) -> anyhow::Result<()> {
    match name.trim() {
        LINK_TRACE => anyhow::bail!("{LINK_TRACE} is read when a run starts and cannot change during it (set it with --set or in the scenario file)"),
        LINK_FILE => anyhow::bail!("{LINK_FILE} cannot be applied during a run as one change: the window's Link panel loads a link file as a change of each link setting"),
        _ => Ok(()),
    }
}

/// Applies `change` to `scenario` after [`check`]: the one way the app changes a scenario by
/// name (the window, `--set`, a replay edit); unchanged when refused. `link.file` names no
/// field: the link file it names is read into the link ([`link_file::apply_link_file`]).
pub fn apply(scenario: &mut Scenario, change: &ParamChange) -> anyhow::Result<()> {
    if change.name() == LINK_FILE {
        // A link file is read when set: its values become the link's (each held to its range).
        return link_file::apply_link_file(scenario, &change.value().to_string());
    }
    check(change)?;
    scenario.apply_change(change).map_err(|e| anyhow!("{e}"))
}

/// A group of parameters: the rows whose dotted name starts with `prefix` and a dot (one section
/// of the scenario), shown together in the window's left panel and the Tune tab's list. A
/// strategy's own settings are the group its registry row names (`StrategyInfo::settings`).
#[derive(Debug)]
pub struct Group {
    /// The scenario section (`glenn`, `link`, ...); `""` holds the names of the scenario's top
    /// level and of sections without a group of their own.
    pub prefix: &'static str,
    pub label: &'static str,
}

impl Group {
    /// Whether the parameter `name` starts with this group's prefix (the top level's group holds
    /// what no other group does: see [`Catalog::group_of`]).
    pub fn prefixes(&self, name: &str) -> bool {
        !self.prefix.is_empty() && name.strip_prefix(self.prefix).is_some_and(|rest| rest.starts_with('.'))
    }
}
