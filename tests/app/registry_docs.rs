//! The strategy list and the parameter table exist once; README's copies must follow them.

use ackscope_protocol::registry;

#[test]
fn readme_lists_every_registered_strategy_with_its_label() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("README.md");
    for row in registry::all() {
        let line = format!("| `{}` | {} |", row.strategy.name(), row.label);
        assert!(readme.contains(&line), "README's strategy table lacks the row starting {line:?}");
    }
}

/// README's parameter list is the table, rendered; edit `src/params/table.rs` and paste the output of
/// `cargo run --example params_table` between the markers.
#[test]
fn readme_parameters_section_is_the_parameter_table() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("README.md");
    let (begin, end) = ("<!-- params:begin -->\n", "<!-- params:end -->");
    let start = readme.find(begin).expect("README lacks the params:begin marker") + begin.len();
    let stop = readme[start..].find(end).expect("README lacks the params:end marker") + start;
    let want = ackscope::params::markdown();
    assert!(
        readme[start..stop] == want,
        "README's Parameters section differs from src/params/table.rs; replace it with:\n{want}"
    );
}
