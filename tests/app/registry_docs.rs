//! The strategy list and the parameter table exist once; README's copies must follow them
//! ([`Catalog::check_readme`]: a new strategy's row and parameters are covered by the same
//! checks, see `new_strategy`).

use ackscope::params::Catalog;

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("README.md")
}

#[test]
fn readme_lists_every_registered_strategy_with_its_label() {
    if let Err(e) = Catalog::builtin().check_readme_strategies(&readme()) {
        panic!("{e}");
    }
}

/// README's parameter list is the table, rendered; edit `src/params/table.rs` and paste the output of
/// `cargo run --example params_table` between the markers.
#[test]
fn readme_parameters_section_is_the_parameter_table() {
    if let Err(e) = Catalog::builtin().check_readme_parameters(&readme()) {
        panic!("{e}");
    }
}
