"""The code sandbox: a worker that runs untrusted Python in jailed processes.

It never imports from `app/`; the app reaches it only over the worker's Unix socket, with the
types in `sandbox.protocol`. Run it with `python -m sandbox --socket PATH` (as root: it builds
namespaces, cgroups and a chroot for every run). See sandbox/README.md."""
