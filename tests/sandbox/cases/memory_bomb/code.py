chunks = []
while True:
    chunks.append(bytearray(64 * 1024 * 1024))
