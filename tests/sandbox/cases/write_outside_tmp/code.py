import os

targets = ["/x", "/usr/x", "/etc/x", "/root/x", "/dev/x", "/bin/x", "/var/x", "/home/x"]
for path in targets:
    try:
        with open(path, "w") as f:
            f.write("x")
        print("WROTE", path)
    except OSError:
        pass
try:
    os.mkdir("/newdir")
    print("WROTE /newdir")
except OSError:
    pass
print("all writes outside /tmp failed")
with open("/tmp/ok", "w") as f:
    f.write("fine")
