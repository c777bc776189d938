# Leave a process behind: it must die with the run (the test then looks for it on the host).
import os
import subprocess

subprocess.Popen(["sleep", "1000"], start_new_session=True)
if os.fork() == 0:
    os.setsid()
    import time

    time.sleep(1000)
print("started background")
