# The worker was started with a canary secret in its environment: none of it may reach here.
import os

print("env:", sorted(os.environ))
text = " ".join(f"{k}={v}" for k, v in os.environ.items())
print("canary:", "present" if "leak-canary" in text else "absent")
try:
    data = open("/proc/1/environ").read()
    print("proc1:", "present" if "leak-canary" in data else "readable, no canary")
except OSError:
    print("proc1: denied")
