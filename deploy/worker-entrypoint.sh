#!/bin/sh
# The sandbox worker's container: make its cgroup writable (Docker mounts /sys/fs/cgroup
# read-only; with CAP_SYS_ADMIN and a cgroup namespace of its own, the worker may manage its
# own subtree), then run the worker as PID 1 of the container, alone in its cgroup, so that
# it can hand the memory, pids and cpu controllers to the runs' cgroups (cgroup v2).
set -eu
if awk '$5 == "/sys/fs/cgroup" { print $6 }' /proc/self/mountinfo | grep -q '^ro'; then
  mount -o remount,rw /sys/fs/cgroup
fi
mkdir -p /run/backprop
exec /srv/backprop/.venv/bin/python -m sandbox \
  --socket /run/backprop/sandbox.sock \
  --client-gid 10001 \
  --state-dir /var/lib/backprop-sandbox \
  --warm-labs /srv/backprop/content/labs \
  "$@"
