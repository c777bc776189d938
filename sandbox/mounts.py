"""The jail's file system: a tmpfs root holding read-only binds of the system and of the
neutral Python view (neutral.py), a private size-limited /tmp, a minimal /dev; then chroot.
Runs in the jail's PID 1, still root, inside the run's own mount namespace."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import stat
import subprocess
from pathlib import Path

from sandbox.compile_cache import JAIL_CACHE, JAIL_SCRATCH
from sandbox.jail_spec import JailSpec
from sandbox.neutral import SYSTEM_PATHS

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


def gpu_devices() -> list[str]:
    """The NVIDIA device nodes a CUDA run needs: the control node, unified memory and the
    GPUs. Only character devices: not the folder nvidia-caps (MIG capabilities), nor the
    display driver's nvidia-modeset."""
    found = []
    for name in sorted(os.listdir("/dev")):
        if not name.startswith("nvidia") or name == "nvidia-modeset":
            continue
        with contextlib.suppress(OSError):
            if stat.S_ISCHR(os.stat(f"/dev/{name}").st_mode):
                found.append(name)
    return found


NVML = "libnvidia-ml.so.1"
GPU_LIBRARIES = ("libcuda.so.1", NVML)


def gpu_count() -> int:
    """How many GPUs this host shows, from their device nodes (/dev/nvidia0, /dev/nvidia1, ...):
    counted without loading any library, for the CUDA zygote (sandbox.zygote)."""
    return sum(name.removeprefix("nvidia").isdigit() for name in gpu_devices())


@functools.cache
def _driver_libraries() -> tuple[tuple[str, str], ...]:
    """(name, real path) of each NVIDIA driver library the loader's cache lists and that
    exists. Asked once, in the CUDA zygote (sandbox.zygote), so every run inherits the answer."""
    ldconfig = next((p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.path.exists(p)), "")
    try:
        listing = subprocess.run(
            [ldconfig, "-p"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    found = set()
    for line in listing.splitlines():
        name, _, path = line.strip().partition(" => ")
        name = name.split(" ", 1)[0]
        if name in GPU_LIBRARIES and os.path.exists(path):
            found.add((name, os.path.realpath(path)))
    return tuple(sorted(found))


def gpu_library_dirs() -> list[str]:
    """Folders of the NVIDIA driver's own libraries (CUDA driver, NVML), as the loader's cache
    lists them. A GPU container runtime often mounts them on their own (e.g.
    /usr/local/nvidia/lib64, read-only), and a bind of /usr does not carry mounts beneath it,
    so CUDA runs bind these too: Triton looks for libcuda by path."""
    return sorted({os.path.dirname(path) for _, path in _driver_libraries()})


def nvml_files() -> list[str]:
    """The NVML library's files, which a CUDA run must not load. NVML cannot start in a jail
    (it wants the GPU's /sys and more of /proc than a run is shown), and when torch's caching
    allocator refuses an allocation it builds its message through NVML: with the library
    there, the learner would get an internal assertion instead of OutOfMemoryError (seen on
    an H100 with torch 2.11). Without it, torch leaves the per-process figures out."""
    return [path for name, path in _driver_libraries() if name == NVML]


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
    if spec.cuda:
        for folder in gpu_library_dirs():
            # The driver's mount point shows as an empty folder in the bind above it: bind the
            # nearest folder the jail already has (e.g. /usr/local/nvidia for .../lib64).
            shown = folder
            while not os.path.isdir(root + shown) and os.path.dirname(shown) not in ("/", ""):
                shown = os.path.dirname(shown)
            if os.path.isdir(root + shown) and shown not in SYSTEM_PATHS:
                bind_readonly(shown, root + shown)
        for path in nvml_files():
            if os.path.exists(root + path):
                mount("/dev/null", root + path, None, MS_BIND)  # loading it then fails
    # The host's boot command line says nothing a sample needs.
    mount("/dev/null", f"{root}/proc/cmdline", None, MS_BIND)
    mount("tmpfs", f"{root}/dev", "tmpfs", MS_NOSUID, "size=64k,mode=755")
    devices = list(DEVICES)
    if spec.cuda:
        devices += gpu_devices()
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
