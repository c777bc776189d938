# Fill the private /tmp; the host's disk must not notice.
block = b"x" * (1024 * 1024)
with open("/tmp/fill", "wb") as f:
    while True:
        f.write(block)
        f.flush()
