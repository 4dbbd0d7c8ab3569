//! What the window offers, as data: the strategies (registry rows) and the parameters (table rows
//! in their groups).
//!
//! The left panel's controls, the Tune tab's lists and the strategy colours are drawn from a
//! catalog, never from a match on the `Strategy` enum or a hand-kept list of sliders: a strategy
//! with a registry row and a group of parameters gets its controls, its colour and its Tune
//! entries with no edit to a panel, and README's checks ([`Catalog::check_readme`]) cover it. The
//! app's is [`Catalog::builtin`]; a test builds one with a strategy of its own.

use ackscope_protocol::{registry, StrategyInfo};

use super::{find_in, markdown_of, Group, Param, GROUPS, PARAMS};

/// Strategies and parameters the window offers.
#[derive(Clone)]
pub struct Catalog {
    /// In menu order.
    pub strategies: Vec<&'static StrategyInfo>,
    /// In display order; the first is the scenario's top level.
    pub groups: Vec<&'static Group>,
    /// In README's order.
    pub params: Vec<&'static Param>,
}

impl Default for Catalog {
    fn default() -> Self {
        Self::builtin()
    }
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.strategies.iter().map(|s| s.name).collect();
        write!(f, "Catalog({names:?}, {} groups, {} parameters)", self.groups.len(), self.params.len())
    }
}

impl Catalog {
    /// The registry and the parameter table.
    pub fn builtin() -> Self {
        Self { strategies: registry::all().collect(), groups: GROUPS.iter().collect(), params: PARAMS.iter().collect() }
    }

    /// The row of the strategy named `name`.
    pub fn strategy(&self, name: &str) -> Option<&'static StrategyInfo> {
        self.strategies.iter().copied().find(|s| s.name == name)
    }

    /// The parameter row answering for `name` (`link.a_to_b.X` finds `link.X`; see
    /// [`super::find`]).
    pub fn find(&self, name: &str) -> Option<&'static Param> {
        find_in(self.params.iter().copied(), name)
    }

    /// The group holding the parameter `name`: the one its first segment names, else the top
    /// level's.
    pub fn group_of(&self, name: &str) -> &'static Group {
        let top = self.groups.first().copied().unwrap_or(&GROUPS[0]);
        self.groups.iter().copied().find(|g| g.prefixes(name)).unwrap_or(top)
    }

    /// The group named `prefix`.
    pub fn group(&self, prefix: &str) -> Option<&'static Group> {
        self.groups.iter().copied().find(|g| g.prefix == prefix)
    }

    /// The rows of `group`, in table order.
    pub fn rows_of<'a>(&'a self, group: &'a Group) -> impl Iterator<Item = &'static Param> + 'a {
        self.params.iter().copied().filter(move |p| std::ptr::eq(self.group_of(p.name), group))
    }

    /// The strategies whose own settings are `group`.
    pub fn strategies_of<'a>(&'a self, group: &'a Group) -> impl Iterator<Item = &'static StrategyInfo> + 'a {
        self.strategies.iter().copied().filter(move |s| s.settings == Some(group.prefix))
    }

    /// The parameters as README's "Parameters" section lists them.
    pub fn markdown(&self) -> String {
        markdown_of(self.params.iter().copied())
    }

    /// Checks README's copies of the catalog: [`Self::check_readme_strategies`] and
    /// [`Self::check_readme_parameters`].
    pub fn check_readme(&self, readme: &str) -> Result<(), String> {
        self.check_readme_strategies(readme)?;
        self.check_readme_parameters(readme)
    }

    /// README's strategy table has a row `` | `name` | label | `` for each strategy.
    pub fn check_readme_strategies(&self, readme: &str) -> Result<(), String> {
        for row in &self.strategies {
            let line = format!("| `{}` | {} |", row.name, row.label);
            if !readme.contains(&line) {
                return Err(format!("README's strategy table lacks the row starting {line:?}"));
            }
        }
        Ok(())
    }

    /// README's "Parameters" section, between its markers, is [`Self::markdown`]; the error
    /// says what to paste.
    pub fn check_readme_parameters(&self, readme: &str) -> Result<(), String> {
        let (begin, end) = ("<!-- params:begin -->\n", "<!-- params:end -->");
        let start = readme.find(begin).ok_or("README lacks the params:begin marker")? + begin.len();
        let stop = readme[start..].find(end).ok_or("README lacks the params:end marker")? + start;
        let want = self.markdown();
        if readme[start..stop] != want {
            return Err(format!(
                "README's Parameters section differs from the parameter table (src/params/table.rs); \
                 replace it with the output of `cargo run --example params_table`:\n{want}"
            ));
        }
        Ok(())
    }
}
