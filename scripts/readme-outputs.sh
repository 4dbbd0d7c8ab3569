#!/usr/bin/env bash
# Regenerates every output README quotes (the blocks after `<!-- output: ... -->` markers) from
# today's code; tests/readme_outputs.rs checks them in `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
ACKSCOPE_UPDATE_README=1 cargo test --release --test app readme_outputs::
git diff --stat README.md
