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
    # The pointer rests at POINTER (x,y; default: the status bar's right end, where no tooltip
    # opens); Xvfb only moves it once a window is up.
    sleep 2
    local pointer=${POINTER:-1270,795}
    command -v xdotool >/dev/null && DISPLAY=$display xdotool mousemove "${pointer%,*}" "${pointer#*,}"
    sleep "$((wait - 2))"
    DISPLAY=$display /usr/bin/import -window root "$out/$name.png"
    kill $app
    wait $app 2>/dev/null || true
    echo "wrote $out/$name.png"
}
# shot_click NAME SECONDS "X,Y[,TEXT] ..." ARGS...: like shot, but after SECONDS click at each X,Y
# (typing TEXT after it, if given) and grab 3 s later; needs xdotool. packet-detail types "msg" in
# the contents filter of a paused run so the row clicked carried messages, then opens its detail.
shot_click() {
    local name=$1 wait=$2 clicks=$3
    shift 3
    XDG_CONFIG_HOME=$(mktemp -d) XDG_DATA_HOME=$(mktemp -d) DISPLAY=$display ./target/release/ackscope --no-intro "$@" & local app=$!
    sleep "$wait"
    local c x y text
    # Keys reach the app only once its window has the focus (no window manager here).
    DISPLAY=$display xdotool windowfocus "$(DISPLAY=$display xdotool search --name ackscope | head -1)"
    for c in $clicks; do
        IFS=, read -r x y text <<<"$c"
        DISPLAY=$display xdotool mousemove "$x" "$y"; sleep 0.5
        DISPLAY=$display xdotool click 1; sleep 0.5
        if [ -n "$text" ]; then DISPLAY=$display xdotool type --delay 100 "$text"; sleep 0.5; fi
    done
    DISPLAY=$display xdotool mousemove 1270 790
    sleep 3
    DISPLAY=$display /usr/bin/import -window root "$out/$name.png"
    kill $app
    wait $app 2>/dev/null || true
    echo "wrote $out/$name.png"
}
shot live-overview 20
shot ab-messages 12 --set strategy=glenn --ab ue4 --tab messages --set link.loss_percent=15
shot chunk-slices 6 --set strategy=chunks --set workload.chunk_kib=256 --set link.loss_percent=5 --tab slices
shot ab-compare 15 --set strategy=glenn --ab ue4 --tab compare --set link.loss_percent=15
shot_click packet-detail 12 "173,12 725,141,msg 540,370" --set strategy=glenn --ab ue4 --tab packets --set link.loss_percent=15
# The pointer over the plots: the legends read out the values at its time.
POINTER=640,300 shot ab-overview-light 20 --theme light --set strategy=glenn --ab ue4 --set link.loss_percent=15
shot anomalies 15 --set strategy=glenn --ab ue4 --tab anomalies --set link.loss_percent=15
# Tune: Run the default sweep (glenn.resend_delay_ms 0-300 ms, glenn/ue4/hybrid, 3 seeds) once the run
# is 25 s in, so the live settings' mark sits on a settled run.
shot_click tune-dark 25 "327,135" --tab tune
shot_click tune-light 25 "327,135" --tab tune --theme light
