#!/usr/bin/env bash
# Regenerates the recorded sessions shipped in sessions/ (short, virtual-time recordings that the
# tests re-run from their headers and compare event by event). Run after any change to event output.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release
bin=./target/release/ackscope
for st in glenn ue4 acks; do
    "$bin" run sessions/default.ron --seconds 15 --set strategy=$st --out sessions/recorded-$st.ron --force > /dev/null
done
"$bin" run sessions/chunk-256k-1pct.ron --seconds 20 --out sessions/recorded-chunks.ron --force > /dev/null
"$bin" run sessions/chunk-256k-1pct.ron --seconds 20 --set strategy=fragments --out sessions/recorded-fragments.ron --force > /dev/null
ls -l sessions
