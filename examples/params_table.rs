//! Prints the parameter table as Markdown, as README's "Parameters" section holds it.
//!
//! Run: `cargo run --example params_table`

fn main() {
    print!("{}", ackscope::params::markdown());
}
