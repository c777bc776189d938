import threading
import time

threads = []
while True:
    t = threading.Thread(target=time.sleep, args=(60,), daemon=True)
    t.start()
    threads.append(t)
