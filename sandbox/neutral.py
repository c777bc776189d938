"""What a run sees of the host's Python, and under which names: the Python installation at
/opt/python, the virtual environment at /opt/venv and an /etc of the sandbox's own, so that
no traceback, warning, `sys.path` or mount table shows where the server keeps its checkout.

The worker builds, in its state folder, the files that differ from the host's (`build`): the
/etc and a thin layer over the virtual environment (its pyvenv.cfg and scripts rewritten for
the new paths, editable-install hooks that name the checkout emptied). launch.py mounts them
for each zygote, which then imports everything from the neutral paths; every jail is a fork
of it and binds those paths (`binds`)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

JAIL_PYTHON = "/opt/python"
JAIL_VENV = "/opt/venv"
ZYGOTE_LIB = "/opt/lib"  # the sandbox package, for the zygote only (jails never mount it)
JAIL_LAB = "/opt/lab"  # sandbox/lab: the harness labs import (backprop_lab), on sys.path
ETC_SOURCE = "/opt/etc"  # the built /etc as the zygote sees it; a jail binds it at /etc
SYSTEM_PATHS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64"]
# Of /sys only the CPU topology (thread pools size themselves from it), not the host's
# network interfaces and devices.
SYS_PATHS = ["/sys/devices/system/cpu"]
# Copied from the host's /etc when present: the loader's cache, certificates, time zone,
# the compiler's alternatives (torch.compile runs one). Nothing else of the host's /etc.
ETC_COPIED = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "timezone",
    "protocols",
    "services",
    "mime.types",
    "alternatives",
    "ssl/certs",
    "ssl/openssl.cnf",
    "pki/tls/certs",
    "pki/tls/cert.pem",
    "pki/ca-trust/extracted",
)
RUN_USER = "sandbox"
HOSTNAME = "sandbox"


def lab_source() -> Path | None:
    """sandbox/lab on the host, when this checkout has it."""
    lab = Path(__file__).resolve().parent / "lab"
    return lab if lab.is_dir() else None


def zygote_python_path() -> str:
    """The zygote's PYTHONPATH: the sandbox package, and the lab harness (whose folder every
    jail mounts, so its sys.path entry, inherited by the fork, finds it)."""
    return ZYGOTE_LIB + (f":{JAIL_LAB}" if lab_source() else "")


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


@dataclass(frozen=True)
class PythonView:
    """Where this Python lives on the host, and where zygotes and runs see it."""

    base: str  # the installation (sys.base_prefix)
    venv: str | None  # the virtual environment (sys.prefix), if any
    version: str  # e.g. "3.11"
    executable: str  # sys.executable

    @classmethod
    def of_this_python(cls) -> PythonView:
        venv = sys.prefix if sys.prefix != sys.base_prefix else None
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        return cls(sys.base_prefix, venv, version, sys.executable)

    @property
    def base_moved(self) -> bool:
        """A system Python (under /usr) stays where it is: /usr is bound anyway."""
        return not any(_under(self.base, p) for p in SYSTEM_PATHS)

    def to_jail(self, host_path: str) -> str:
        """`host_path` under the neutral names (unchanged when it is under neither)."""
        if self.venv and _under(host_path, self.venv):
            return JAIL_VENV + host_path[len(self.venv) :]
        if self.base_moved and _under(host_path, self.base):
            return JAIL_PYTHON + host_path[len(self.base) :]
        return host_path

    def zygote_executable(self) -> str:
        """The interpreter a zygote runs as, by its neutral name."""
        if self.venv:
            return f"{JAIL_VENV}/bin/{os.path.basename(self.executable)}"
        return self.to_jail(os.path.realpath(self.executable))

    def binds(self) -> list[list[str]]:
        """[path as the zygote sees it, path in the jail] for every read-only bind."""
        pairs = [[p, p] for p in SYSTEM_PATHS + SYS_PATHS] + [[ETC_SOURCE, "/etc"]]
        if self.base_moved:
            pairs.append([JAIL_PYTHON, JAIL_PYTHON])
        if self.venv:
            pairs.append([JAIL_VENV, JAIL_VENV])
        if lab_source():
            pairs.append([JAIL_LAB, JAIL_LAB])
        return pairs


def build(state_dir: Path, view: PythonView, uids: list[int]) -> None:
    """(Re)build `state_dir`/etc and, in a virtual environment, `state_dir`/venv-layer."""
    build_etc(state_dir / "etc", uids)
    layer = state_dir / "venv-layer"
    shutil.rmtree(layer, ignore_errors=True)
    layer.mkdir(mode=0o755)
    if view.venv:
        _build_venv_layer(layer, view)


def build_etc(etc: Path, uids: list[int], host_etc: Path = Path("/etc")) -> None:
    """A minimal /etc: the run users (every slot's uid is called `sandbox`), a hosts file
    with localhost, files-only name services, and from the host only what ETC_COPIED names
    (no shadow, no keys, no host names)."""
    shutil.rmtree(etc, ignore_errors=True)
    etc.mkdir(mode=0o755)
    nologin = "/usr/sbin/nologin"
    users = [f"root:x:0:0:root:/root:{nologin}", f"nobody:x:65534:65534:nobody:/:{nologin}"]
    users += [f"{RUN_USER}:x:{uid}:{uid}:{RUN_USER}:/tmp:{nologin}" for uid in uids]
    groups = ["root:x:0:", "nogroup:x:65534:"] + [f"{RUN_USER}:x:{uid}:" for uid in uids]
    files = {
        "passwd": users,
        "group": groups,
        "hostname": [HOSTNAME],
        "hosts": [f"127.0.0.1\tlocalhost {HOSTNAME}", "::1\tlocalhost ip6-localhost ip6-loopback"],
        "nsswitch.conf": [f"{db}: files" for db in ("passwd", "group", "shadow", "hosts")]
        + [f"{db}: files" for db in ("networks", "protocols", "services", "ethers", "rpc")],
    }
    for name, lines in files.items():
        (etc / name).write_text("\n".join(lines) + "\n")
    for name in ETC_COPIED:
        source, target = host_etc / name, etc / name
        if not os.path.lexists(source):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        elif source.is_dir():
            shutil.copytree(source, target, symlinks=True)
        else:
            shutil.copy2(source, target)
    for path in (etc, *etc.rglob("*")):
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)


def _build_venv_layer(layer: Path, view: PythonView) -> None:
    """What differs from the virtual environment under /opt/venv: pyvenv.cfg (its `home`),
    bin/ (links into the installation, scripts whose first line names the interpreter), and
    in site-packages whatever names the checkout: editable-install hooks (emptied), `.pth`
    lines pointing elsewhere on the host (dropped), direct_url.json (emptied)."""
    assert view.venv is not None
    venv = Path(view.venv)
    config = {}
    for line in (venv / "pyvenv.cfg").read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() in ("home", "include-system-site-packages", "version"):
            config[key.strip()] = value.strip()
    if "home" in config:
        config["home"] = view.to_jail(config["home"])
    (layer / "pyvenv.cfg").write_text("".join(f"{k} = {v}\n" for k, v in config.items()))
    (layer / "bin").mkdir()
    for entry in (venv / "bin").iterdir():
        target = layer / "bin" / entry.name
        if entry.is_symlink():
            link = os.readlink(entry)
            if os.path.isabs(link) and view.to_jail(link) != link:
                target.symlink_to(view.to_jail(link))
        elif entry.is_file() and entry.stat().st_size < 1 << 20:
            data = entry.read_bytes()
            rewritten = _rewrite(data, view)
            if rewritten != data:
                target.write_bytes(rewritten)
                target.chmod(entry.stat().st_mode & 0o755)
    site = Path("lib") / f"python{view.version}" / "site-packages"
    _neutral_site_packages(venv / site, layer / site, view)


def _rewrite(data: bytes, view: PythonView) -> bytes:
    assert view.venv is not None
    data = data.replace(view.venv.encode(), JAIL_VENV.encode())
    if view.base_moved:
        data = data.replace(view.base.encode(), JAIL_PYTHON.encode())
    return data


def _neutral_site_packages(site: Path, out: Path, view: PythonView) -> None:
    out.mkdir(parents=True)
    for hook in site.glob("__editable__*"):
        (out / hook.name).write_text("")  # an editable install maps its packages to the checkout
    for pth in site.glob("*.pth"):
        if pth.name.startswith("__editable__"):
            continue
        kept = []
        for line in pth.read_text().splitlines():
            if os.path.isabs(line.strip()):
                line = view.to_jail(line.strip())
                if not line.startswith("/opt/"):
                    continue  # a folder elsewhere on the host: not in any jail anyway
            kept.append(line)
        (out / pth.name).write_text("\n".join(kept) + "\n")
    for direct_url in site.glob("*.dist-info/direct_url.json"):
        try:
            local = json.loads(direct_url.read_text()).get("url", "").startswith("file:")
        except (OSError, ValueError, AttributeError):
            local = True
        if local:
            (out / direct_url.parent.name).mkdir(exist_ok=True)
            (out / direct_url.parent.name / "direct_url.json").write_text("{}\n")
