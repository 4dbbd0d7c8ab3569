//! The strategy list exists once (the registry); README's strategy table must follow it.

use ackscope_protocol::registry;

#[test]
fn readme_lists_every_registered_strategy_with_its_label() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("README.md");
    for row in registry::all() {
        let line = format!("| `{}` | {} |", row.strategy.name(), row.label);
        assert!(readme.contains(&line), "README's strategy table lacks the row starting {line:?}");
    }
}
