# Nothing a run prints may name where the server keeps its checkout or its Python: not the
# mount table, not sys.path, not a torch warning (its file), not /etc (which is the
# sandbox's own), not the host name. The test checks every line for the host's paths.
import os
import pwd
import socket
import sys
import warnings

import torch

print("hostname:", socket.gethostname(), os.uname().nodename)
print("user:", pwd.getpwuid(os.getuid()).pw_name)
allowed = {
    "passwd", "group", "hosts", "hostname", "nsswitch.conf", "ld.so.cache", "ld.so.conf",
    "ld.so.conf.d", "localtime", "timezone", "protocols", "services", "mime.types",
    "alternatives", "ssl", "pki",
}
print("etc extra:", sorted(set(os.listdir("/etc")) - allowed))
print("etc has shadow:", os.path.exists("/etc/shadow"))
print(open("/proc/self/mountinfo").read())
print("sys.path:", sys.path, sys.prefix, sys.base_prefix, sys.executable)
print("modules:", sorted({os.path.dirname(m.__file__) for m in list(sys.modules.values())
                          if getattr(m, "__file__", None)})[:40])
print("torch:", torch.__file__)
warnings.simplefilter("always")
torch.nn.Softmax()(torch.ones(2))
import importlib.metadata as md  # noqa: E402

for dist in md.distributions():
    text = dist.read_text("direct_url.json")
    if text and "file:" in text:
        print("DIRECT URL", text)
print("done")
