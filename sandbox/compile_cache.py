"""The torch.compile cache every run starts from, and the trusted step that fills it.

Compiling a lab from nothing takes 8-60 s on a CPU; loading the same graphs from inductor's
on-disk cache takes well under a second. So when the worker starts it runs each lab's own
code (read from the content folder, never from a client) once per backend, in an ordinary
jail whose cache folder is a writable bind of `<state>/compile-cache/<backend>`. Then it
seals the folder (root's, never written again while this worker lives) and every later run
sees it through an overlay: the sealed folder as the read-only lower layer, an upper layer
in the run's own /tmp. A run may change, add or delete anything in its cache; all of it goes
to its upper layer and dies with it. No run can write to what the next one loads.

The samples of the other decks that call torch.compile are compiled the same way, after the
labs: run as printed, they load what they compile instead of compiling for a minute or more
(a ResNet training step takes 1.5 min of a 2-core CPU cold, past a run's 60 s limit).

Warming runs set BACKPROP_LAB_WARM=1, which makes the harness compile and check each case
but time only one short round (backprop_lab/compare.py): what is cached is the same graphs.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

# Where a jail sees its cache; inductor's and Triton's cache folders lie under it.
JAIL_CACHE = "/tmp/.compile-cache"
# Root's, mode 0700, in the jail's /tmp: the overlay's upper and work folders for the run.
JAIL_SCRATCH = "/tmp/.compile-scratch"
WARM_ENV = "BACKPROP_LAB_WARM"

# A python fence at the start of a line, as the content importer reads them.
_FENCE = re.compile(r"^```python([^\n]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
_REQUIRES = re.compile(r"requires=([\w,]+)")


@dataclass(frozen=True)
class WarmProgram:
    """One sample the trusted step compiles."""

    name: str  # the page's file and the sample's index in it, for the log
    code: str
    requires: frozenset[str]  # the fence's requires= (e.g. cuda)

    def runs_on(self, backend: str) -> bool:
        return "cuda" not in self.requires or backend == "cuda"


# What keeps a deck's sample from running as printed: the content's requires= flags
# (app.domain.Requirement; this package imports nothing of the app, a test holds the two
# together).
CANNOT_RUN_AS_PRINTED = frozenset({"network", "incomplete", "broken", "long"})


def lab_programs(labs_dir: Path) -> list[WarmProgram]:
    """Every python sample of every lab page in `labs_dir`, in file order. Samples that need
    the network are left out (no jail has one)."""
    programs = []
    for path in sorted(labs_dir.glob("*.md")):
        for name, code, requires in _samples(path):
            if "network" not in requires:
                programs.append(WarmProgram(name, code, requires))
    return programs


def warm_programs(labs_dir: Path) -> list[WarmProgram]:
    """The labs' programs (`lab_programs`), then, when `labs_dir` lies in a content folder
    (beside its decks.yml), every other deck's sample that calls torch.compile and runs as
    printed. Labs first: they time compiled code, so a cold compile would spoil their
    figures; the others only wait less for their answer."""
    programs = lab_programs(labs_dir)
    content = labs_dir.parent
    if not (content / "decks.yml").is_file():
        return programs
    labs = labs_dir.resolve()
    for path in sorted(content.glob("*/*.md")):
        if path.parent.resolve() == labs:
            continue
        for name, code, requires in _samples(path):
            if "torch.compile" in code and not requires & CANNOT_RUN_AS_PRINTED:
                programs.append(WarmProgram(f"{path.parent.name}/{name}", code, requires))
    return programs


def _samples(path: Path) -> list[tuple[str, str, frozenset[str]]]:
    """The python samples of a content page: name, code (as the importer stores it) and the
    fence's requires=."""
    found = []
    for index, match in enumerate(_FENCE.finditer(path.read_text(encoding="utf-8"))):
        flags = _REQUIRES.search(match.group(1))
        requires = frozenset(flags.group(1).split(",")) if flags else frozenset()
        found.append((f"{path.name}#{index}", match.group(2).removesuffix("\n"), requires))
    return found


def fresh_folder(state_dir: Path, backend: str) -> Path:
    """An empty folder for `backend`'s cache, whatever an earlier life of the worker left
    (its runs are dead: they die with their worker)."""
    folder = state_dir / "compile-cache" / backend
    for old in (folder, _published(folder)):
        if old.exists():
            shutil.rmtree(old)
    folder.mkdir(mode=0o755, parents=True)
    return folder


def publish(folder: Path, number: int) -> Path:
    """A sealed snapshot of the folder being warmed, for runs to start from while warming
    goes on: hard links, so it costs no copying. The warming run that follows writes only
    new files (inductor and Triton write each entry to a temporary file, then rename it),
    so nothing a run loads changes under it. Kept until the worker's next start: a run
    may still be loading from an older one."""
    snapshot = _published(folder) / str(number)
    if snapshot.exists():
        shutil.rmtree(snapshot)
    snapshot.parent.mkdir(mode=0o755, exist_ok=True)
    shutil.copytree(folder, snapshot, symlinks=True, copy_function=os.link)
    seal(snapshot)
    return snapshot


def _published(folder: Path) -> Path:
    return folder.with_name(folder.name + ".published")


def seal(folder: Path) -> None:
    """Make the warmed folder root's, and every entry in it open to all through the overlay:
    a run's uid must be able to copy entries up into its own layer (to write next to them)
    whichever slot warmed them. Nothing reaches this folder but the overlay's lower layer,
    which the kernel never writes."""
    for path in [folder, *folder.rglob("*")]:
        if path.is_symlink():
            os.lchown(path, 0, 0)
            continue
        os.chown(path, 0, 0)
        mode = path.stat().st_mode & 0o777
        path.chmod(0o777 if path.is_dir() else mode | 0o666)
