# Every run is a fork of the same warm process: no earlier run's code may be findable in
# this process's memory. The test compares this count with and without another run first
# (the needle itself is in memory here too, so only the difference matters).
# Read-only files of the system and of Python (/usr, /opt) cannot hold another run's code:
# they are skipped (reading their ~3 GB of libraries from a cold cache took most of a minute).
import ctypes

needle = bytes([80, 82, 73, 86, 65, 84, 69, 45, 77, 65, 82, 75, 69, 82])  # PRIVATE-MARKER
found = 0
for line in open("/proc/self/maps"):
    fields = line.split()
    start, end = (int(x, 16) for x in fields[0].split("-"))
    path = fields[5] if len(fields) > 5 else ""
    if "r" not in fields[1] or end - start > 1 << 29 or "[v" in line:
        continue
    if path.startswith(("/usr/", "/opt/", "/lib")):
        continue
    try:
        found += ctypes.string_at(start, end - start).count(needle)
    except Exception:
        continue
print("found", found)
