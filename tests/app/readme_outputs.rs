//! README's quoted outputs, checked against what the commands print today, so they cannot drift.
//!
//! A quote sits between a marker naming what produced it and `<!-- /output -->`:
//! `<!-- output: ackscope ARGS -->` runs the binary (a `--json` object is laid out one key per
//! line, `wall_seconds` left out since it is the one figure that is not deterministic; a Markdown
//! table is quoted as a table, anything else in a fenced block), and
//! `<!-- output: example NAME -->` calls the protocol example's table function. Regenerate every
//! quote with `scripts/readme-outputs.sh` (this test with `ACKSCOPE_UPDATE_README=1`).

use std::process::Command;

#[allow(dead_code)]
#[path = "../../protocol/examples/chunk_table.rs"]
mod chunk_table;
#[allow(dead_code)]
#[path = "../../protocol/examples/glenn_redundancy.rs"]
mod glenn_redundancy;
#[allow(dead_code)]
#[path = "../../protocol/examples/ue4_figures.rs"]
mod ue4_figures;

const MARKER: &str = "<!-- output: ";
const END: &str = "<!-- /output -->";

/// The quote of what a marker's source prints today, as README shows it.
fn quote(source: &str) -> String {
    let text = produce(source);
    if text.starts_with('|') {
        text
    } else if source.contains("--json") {
        format!("```json\n{text}```\n")
    } else {
        format!("```text\n{text}```\n")
    }
}

/// What a marker's source prints today.
fn produce(source: &str) -> String {
    if let Some(name) = source.strip_prefix("example ") {
        return match name {
            "chunk_table" => chunk_table::report(),
            "glenn_redundancy" => glenn_redundancy::report(60.0),
            "ue4_figures actors" => ue4_figures::actors_table(),
            other => panic!("README names an unknown example output '{other}'"),
        };
    }
    let args = source.strip_prefix("ackscope ").unwrap_or_else(|| panic!("unknown output source '{source}'"));
    let args: Vec<&str> = args.split_whitespace().collect();
    let out = Command::new(env!("CARGO_BIN_EXE_ackscope"))
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run ackscope");
    assert!(out.status.success(), "ackscope {source}: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("UTF-8 output");
    if args.contains(&"--json") {
        layout_json(&text)
    } else {
        text
    }
}

/// One top-level key per line; nested objects on one line when short, else one key per line.
fn layout_json(text: &str) -> String {
    let serde_json::Value::Object(top) = serde_json::from_str(text.trim()).expect("one JSON object") else {
        panic!("not a JSON object: {text}");
    };
    let fields: Vec<String> = top
        .iter()
        .filter(|(k, _)| k.as_str() != "wall_seconds")
        .map(|(k, v)| {
            let one_line = v.to_string();
            match v {
                serde_json::Value::Object(inner) if one_line.len() > 90 => {
                    let rows: Vec<String> = inner.iter().map(|(ik, iv)| format!("    \"{ik}\": {iv}")).collect();
                    format!("  \"{k}\": {{\n{}\n  }}", rows.join(",\n"))
                }
                _ => format!("  \"{k}\": {one_line}"),
            }
        })
        .collect();
    format!("{{\n{}\n}}\n", fields.join(",\n"))
}

/// Each quote: (source, byte range between the marker line and the end marker).
fn quotes(readme: &str) -> Vec<(String, std::ops::Range<usize>)> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(i) = readme[at..].find(MARKER) {
        let start = at + i + MARKER.len();
        let end = start + readme[start..].find(" -->").expect("marker closes");
        let source = readme[start..end].to_string();
        let body = end + readme[end..].find('\n').expect("marker line ends") + 1;
        let close = body + readme[body..].find(END).unwrap_or_else(|| panic!("no {END} after {source}"));
        found.push((source, body..close));
        at = close;
    }
    found
}

#[test]
fn readme_quotes_what_the_commands_print() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    let mut readme = std::fs::read_to_string(path).expect("README.md");
    let update = std::env::var_os("ACKSCOPE_UPDATE_README").is_some();
    let found = quotes(&readme);
    assert!(found.len() >= 4, "README lost its quoted outputs: {} found", found.len());
    let mut stale = Vec::new();
    for (source, range) in found.into_iter().rev() {
        let now = quote(&source);
        if readme[range.clone()] != now {
            stale.push(source);
            readme.replace_range(range, &now);
        }
    }
    if update {
        std::fs::write(path, readme).expect("write README.md");
    } else {
        assert!(
            stale.is_empty(),
            "README quotes differ from today's output for: {stale:?}; run scripts/readme-outputs.sh"
        );
    }
}
