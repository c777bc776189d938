"""The jail's file system: a tmpfs root holding read-only binds of the system and of the
neutral Python view (neutral.py), a private size-limited /tmp, a minimal /dev; then chroot.
Runs in the jail's PID 1, still root, inside the run's own mount namespace."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import TYPE_CHECKING

from sandbox.compile_cache import JAIL_CACHE, JAIL_SCRATCH

if TYPE_CHECKING:
    from sandbox.jail import JailSpec

_libc = ctypes.CDLL(None, use_errno=True)

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18

# Devices a PyTorch program may open; everything else in /dev stays out of reach.
DEVICES = ("null", "zero", "full", "random", "urandom")


def check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    check(
        _libc.mount(
            source.encode() if source else None,
            target.encode(),
            fstype.encode() if fstype else None,
            flags,
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def bind_readonly(source_path: str, target_path: str) -> None:
    """`source_path` (a folder or file) seen read-only at `target_path`. A symlink is copied
    as a symlink: /lib -> usr/lib on merged-/usr systems stays one."""
    source, target = Path(source_path), Path(target_path)
    if source.is_symlink():
        target.parent.mkdir(parents=True, exist_ok=True)
        if not os.path.lexists(target):
            target.symlink_to(os.readlink(source))
        return
    if source.is_dir():
        target.mkdir(parents=True, exist_ok=True)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.touch()
    mount(str(source), str(target), None, MS_BIND)
    mount(None, str(target), None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _mount_compile_cache(spec: JailSpec, root: str) -> None:
    """The run's compile cache at JAIL_CACHE (see compile_cache.py): the sealed cache under
    an upper layer of the run's own, the trusted step's folder itself, or an empty folder."""
    target = root + JAIL_CACHE
    os.mkdir(target)
    if spec.compile_cache is None:
        os.chown(target, spec.uid, spec.uid)
        return
    if spec.warm:
        mount(spec.compile_cache, target, None, MS_BIND)
        mount(None, target, None, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV)
        return
    scratch = root + JAIL_SCRATCH
    os.mkdir(scratch, 0o700)  # root's: the code reaches its layer only through the overlay
    os.mkdir(f"{scratch}/upper")
    os.mkdir(f"{scratch}/work")
    os.chown(f"{scratch}/upper", spec.uid, spec.uid)  # the merged root is the upper's
    # Each named through /proc/self/fd, so /proc/self/mountinfo shows none of the host's paths.
    fds = [
        os.open(path, os.O_PATH | os.O_DIRECTORY)
        for path in (spec.compile_cache, f"{scratch}/upper", f"{scratch}/work")
    ]
    try:
        lower, upper, work = (f"/proc/self/fd/{fd}" for fd in fds)
        options = f"lowerdir={lower},upperdir={upper},workdir={work}"
        mount("overlay", target, "overlay", MS_NOSUID | MS_NODEV, options)
    finally:
        for fd in fds:
            os.close(fd)


def build_root(spec: JailSpec) -> None:
    """Mount the jail's root on `spec.root_dir` and chroot into it."""
    root = spec.root_dir
    mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing we mount leaks to the host
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=755")
    for name in ("proc", "dev", "tmp"):
        os.makedirs(f"{root}/{name}", exist_ok=True)
    mount("proc", f"{root}/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    mount("tmpfs", f"{root}/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={spec.tmp_mb}m,mode=1777")
    _mount_compile_cache(spec, root)
    for source, target in spec.binds:
        if os.path.lexists(source):
            bind_readonly(source, root + target)
    # The host's boot command line says nothing a sample needs.
    mount("/dev/null", f"{root}/proc/cmdline", None, MS_BIND)
    mount("tmpfs", f"{root}/dev", "tmpfs", MS_NOSUID, "size=64k,mode=755")
    devices = list(DEVICES)
    if spec.cuda:
        devices += [d for d in os.listdir("/dev") if d.startswith("nvidia")]
    for name in devices:
        if os.path.exists(f"/dev/{name}"):
            Path(f"{root}/dev/{name}").touch()
            mount(f"/dev/{name}", f"{root}/dev/{name}", None, MS_BIND)
    os.makedirs(f"{root}/dev/shm")
    mount("tmpfs", f"{root}/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=1777")
    for name, target in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        os.symlink(target, f"{root}/dev/{name}")
    # The root itself becomes read-only once its mount points exist.
    mount(None, root, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chroot(root)
    os.chdir("/tmp")
