# Every run is a fork of the same warm process: no earlier run's code may be findable in
# this process's memory. The test compares this count with and without another run first
# (the needle itself is in memory here too, so only the difference matters).
import ctypes

needle = bytes([80, 82, 73, 86, 65, 84, 69, 45, 77, 65, 82, 75, 69, 82])  # PRIVATE-MARKER
found = 0
for line in open("/proc/self/maps"):
    start, end = (int(x, 16) for x in line.split()[0].split("-"))
    if "r" not in line.split()[1] or end - start > 1 << 29 or "[v" in line:
        continue
    try:
        found += ctypes.string_at(start, end - start).count(needle)
    except Exception:
        continue
print("found", found)
