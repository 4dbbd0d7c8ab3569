#!/usr/bin/env bash
# Regenerates README's screenshots: runs the release app under Xvfb and grabs the window.
# Needs: xvfb imagemagick (apt-get install xvfb xauth imagemagick libgl1-mesa-dri libegl-mesa0 libglx-mesa0).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release
out=docs
mkdir -p "$out"
display=:97
Xvfb $display -screen 0 1280x800x24 -nolisten tcp & xvfb=$!
trap 'kill $xvfb 2>/dev/null || true' EXIT
sleep 1
# The default scenario (60 pps each way, 50 ms one-way latency, 5% loss), live for 20 s.
DISPLAY=$display ./target/release/ackscope & app=$!
sleep 20
DISPLAY=$display /usr/bin/import -window root "$out/live-overview.png"
kill $app
wait $app 2>/dev/null || true
echo "wrote $out/live-overview.png"
