//! Scenario parameters by dotted name: one table ([`table::PARAMS`]) with every settable
//! parameter's name, label, unit, valid range and help, read by the window's controls, by `--set`
//! (which refuses values outside the range), by the check of every loaded scenario and session
//! ([`validate`]) and by README's parameter list ([`markdown`]); the `--set` machinery itself
//! ([`overrides`]); and link presets ([`presets`]).
//!
//! Keeping name, range and help in one row means the slider, the command line and the docs can
//! never disagree about them.

pub mod overrides;
pub mod presets;
pub mod table;
#[cfg(test)]
mod tests;
pub mod validate;

pub use table::PARAMS;

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

    /// Refuses a value for `name` (this parameter, maybe under a per-direction or per-strategy
    /// name) that is not a finite number in range; other values are left to the deserializer.
    /// A whole number written as a float (`1e6`, `1500.0`) comes back as plain digits, which the
    /// scenario's integer fields accept.
    pub fn check(&self, name: &str, raw: &str) -> anyhow::Result<Option<String>> {
        let (min, max, integer) = match self.kind {
            Kind::Number { min, max, integer, .. } => (min, max, integer),
            Kind::OptionalNumber { min, max } => {
                if matches!(raw.trim(), "null" | "none" | "None" | "") {
                    return Ok(Some("null".into()));
                }
                (min, max, false)
            }
            _ => return Ok(None),
        };
        let Ok(v) = raw.trim().parse::<f64>() else { return Ok(None) };
        self.check_number(name, v, raw.trim(), min, max, integer)?;
        Ok(integer.then(|| format!("{v:.0}")))
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
        }
    }
}

/// The row for a dotted name: `link.a_to_b.X` and `link.b_to_a.X` find `link.X`, the
/// estimator settings of `dnm.stats.X` and `rellikt.stats.X` find `ack.stats.X`, and a client's
/// own `client.K.X` finds `X`.
pub fn find(name: &str) -> Option<&'static Param> {
    let name = name.trim();
    let name = match ackscope_protocol::scenario::clients::parse_client_name(name) {
        Some((Ok(_), rest)) => rest,
        _ => name,
    };
    let base = if let Some(rest) = name.strip_prefix("link.a_to_b.").or_else(|| name.strip_prefix("link.b_to_a.")) {
        format!("link.{rest}")
    } else if let Some(rest) = name.strip_prefix("dnm.stats.").or_else(|| name.strip_prefix("rellikt.stats.")) {
        format!("ack.stats.{rest}")
    } else {
        name.to_string()
    };
    PARAMS.iter().find(|p| p.name == base)
}

/// The row for `name`, which must be in the table (the window's controls name theirs literally).
pub fn get(name: &str) -> &'static Param {
    find(name).unwrap_or_else(|| panic!("parameter '{name}' is not in the table"))
}

/// The table as Markdown, as README's "Parameters" section holds it.
pub fn markdown() -> String {
    let mut s = String::from("| name | values | unit | what it does |\n|---|---|---|---|\n");
    for p in PARAMS {
        s += &format!("| `{}` | {} | {} | {} |\n", p.name, p.values_text(), p.unit, p.tip);
    }
    s
}
