#!/bin/sh
# The system programs the tests and benchmarks drive for real: less and vi (full-screen programs on
# the alternate screen), tmux (the benchmark's reference terminal; a window inside tmux), dbus-daemon (a
# session bus for the desktop notifications' test), bwrap and socat (Claude Code's OS sandbox on Linux,
# which Polter turns on for a role that writes nothing; Codex uses a system bwrap too), and OpenSSH's client and
# server (sessions on other hosts: the tests run an sshd of their own on a loopback port). Installed from Debian's
# packages when missing and apt-get is there; otherwise the tests that need them fail and say why.
set -e
missing=""
command -v less >/dev/null 2>&1 || missing="$missing less"
command -v vi >/dev/null 2>&1 || missing="$missing vim-tiny"
command -v tmux >/dev/null 2>&1 || missing="$missing tmux"
command -v dbus-daemon >/dev/null 2>&1 || missing="$missing dbus-daemon"
command -v bwrap >/dev/null 2>&1 || missing="$missing bubblewrap"
command -v socat >/dev/null 2>&1 || missing="$missing socat"
command -v ssh >/dev/null 2>&1 || missing="$missing openssh-client"
[ -x /usr/sbin/sshd ] || command -v sshd >/dev/null 2>&1 || missing="$missing openssh-server"
[ -z "$missing" ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
    echo "system-tools: missing$missing and no apt-get; the tests that need them will fail" >&2
    exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo -n"
echo "system-tools: installing$missing from Debian's packages" >&2
if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing; } >&2; then
    echo "system-tools: could not install$missing; the tests that need them will fail" >&2
fi
