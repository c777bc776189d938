# CPU time is counted for the whole run, not per process.
import os

for _ in range(4):
    if os.fork() == 0:
        while True:
            pass
while True:
    pass
