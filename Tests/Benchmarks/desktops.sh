# shellcheck shell=bash
# shellcheck disable=SC2154 # work and results come from common.sh's make_work
# shellcheck disable=SC2034 # desktop_env is set for the sourcing script
# Shared by the desktop benchmarks (clipwatch-bench.sh, follow-bench.sh): desktops started
# and stopped, the tools each kind needs. Source after common.sh: it checks the binary and /proc,
# and makes the scratch directory.

require_itsypad
[[ -r /proc/self/stat ]] || die "/proc is not mounted: idle CPU cannot be read"
make_work
DESKTOPS=${DESKTOPS:-wayland x11}

pids=()
runtimes=()
# Stops every desktop and process started, and removes the compositors' runtime directories.
cleanup() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    pids=()
    for runtime in "${runtimes[@]}"; do rm -rf "$runtime"; done
    runtimes=()
}
# shellcheck disable=SC2064 # expand $work now, as make_work's trap does
trap "cleanup; rm -rf '$work'" EXIT

have() { for tool in "$@"; do command -v "$tool" >/dev/null || return 1; done; }

# Whether a desktop of kind $1 can run here (its programs and its clients'); when not, the summary says so.
desktop_available() {
    local tools
    case $1 in
    wayland) tools=(sway setpriv wl-copy wl-paste) ;;
    x11) tools=(Xvfb xclip) ;;
    *) die "unknown desktop $1 (wayland or x11)" ;;
    esac
    have "${tools[@]}" && return
    echo "$1: skipped (needs ${tools[*]})" | tee -a "$results/summary.txt"
    return 1
}

: >"$results/summary.txt"

# Starts a desktop of kind $1 (a headless sway run as nobody, or an Xvfb) named $2; sets
# desktop_env to what its clients need, as KEY=VALUE words (the other kind's variable empty).
start_desktop() {
    case $1 in
    wayland)
        local runtime socket=
        runtime=$(mktemp -d "/tmp/$BENCH_NAME-sway.XXXXXX")
        runtimes+=("$runtime")
        echo 'xwayland disable' >"$runtime/config"
        chown 65534:65534 "$runtime" && chmod 700 "$runtime"
        env -i PATH=/usr/bin:/bin HOME="$runtime" XDG_RUNTIME_DIR="$runtime" WLR_BACKENDS=headless \
            WLR_RENDERER=pixman WLR_LIBINPUT_NO_DEVICES=1 \
            setpriv --reuid=65534 --regid=65534 --clear-groups sway -c "$runtime/config" >"$results/sway-$2.log" 2>&1 &
        pids+=($!)
        for _ in $(seq 100); do
            socket=$(find "$runtime" -maxdepth 1 -name 'wayland-*' ! -name '*.lock' | head -1)
            [[ -n $socket ]] && break
            sleep 0.1
        done
        [[ -n $socket ]] || die "sway did not start; see $results/sway-$2.log"
        mkdir -p "$work/runtime-$2" && chmod 700 "$work/runtime-$2"
        desktop_env="WAYLAND_DISPLAY=$socket XDG_RUNTIME_DIR=$work/runtime-$2 DISPLAY="
        ;;
    x11)
        Xvfb -displayfd 1 -nolisten tcp >"$work/display-$2" 2>"$results/xvfb-$2.log" &
        pids+=($!)
        for _ in $(seq 100); do [[ -s $work/display-$2 ]] && break; sleep 0.1; done
        [[ -s $work/display-$2 ]] || die "Xvfb did not start; see $results/xvfb-$2.log"
        desktop_env="DISPLAY=:$(tr -dc 0-9 <"$work/display-$2") WAYLAND_DISPLAY="
        ;;
    esac
}

# Copies $2 on the clipboard of a desktop of kind $1 whose environment is $3 (desktop_env).
copy_on() {
    # shellcheck disable=SC2086 # the words are KEY=VALUE pairs
    if [[ $1 == wayland ]]; then printf %s "$2" | env $3 wl-copy; else printf %s "$2" | env $3 xclip -selection clipboard; fi
}
