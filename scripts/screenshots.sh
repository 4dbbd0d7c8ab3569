#!/usr/bin/env bash
# Regenerates README's screenshots: runs the release app under Xvfb and grabs the screen.
# Needs: apt-get install xvfb xauth imagemagick libgl1-mesa-dri libegl-mesa0 libglx-mesa0
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release
out=docs
mkdir -p "$out"
display=:97
Xvfb $display -screen 0 1280x800x24 -nolisten tcp & xvfb=$!
trap 'kill $xvfb 2>/dev/null || true' EXIT
sleep 1
# shot NAME SECONDS ARGS...: run the app with ARGS, wait, grab the screen.
shot() {
    local name=$1 wait=$2
    shift 2
    XDG_CONFIG_HOME=$(mktemp -d) XDG_DATA_HOME=$(mktemp -d) DISPLAY=$display ./target/release/ackscope --no-intro "$@" & local app=$!
    sleep "$wait"
    DISPLAY=$display /usr/bin/import -window root "$out/$name.png"
    kill $app
    wait $app 2>/dev/null || true
    echo "wrote $out/$name.png"
}
shot live-overview 20
shot ab-messages 12 --set strategy=glenn --ab ue4 --tab messages --set link.loss_percent=15
shot chunk-slices 6 --set strategy=chunks --set workload.chunk_kib=256 --set link.loss_percent=5 --tab slices
shot ab-compare 15 --set strategy=glenn --ab ue4 --tab compare --set link.loss_percent=15
# The pointer off the list, so no row's tooltip covers it.
command -v xdotool >/dev/null && DISPLAY=$display xdotool mousemove 1270 795
shot anomalies 15 --set strategy=glenn --ab ue4 --tab anomalies --set link.loss_percent=15
