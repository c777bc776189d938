# Look everywhere for the app's source, database, secret key, worker socket or sample store.
import os

wanted = {
    "backprop.db",
    "secret_key",
    "sandbox.sock",
    ".startup.lock",
    "decks.yml",
    "sandbox_client.py",
    "runner.js",
    "0001_content_tables.py",
}
found = []
for root, dirs, files in os.walk("/"):
    if root.startswith(("/proc", "/sys")):
        dirs[:] = []
        continue
    found += [os.path.join(root, f) for f in files if f in wanted]
    if os.path.basename(root) == "app" and "main.py" in files:
        found.append(root)
print("found:", found)
