# Run by Debian's python3.11 under Gramine under sgxemu (test_gramine.sh)
# and natively; the two outputs must be the same.
import hashlib
import json
import os
import queue
import tempfile
import threading
import zlib

q = queue.Queue()


def work(i):
    h = hashlib.sha256()
    for k in range(2000):
        h.update(("%d:%d" % (i, k)).encode())
    q.put((i, h.hexdigest()[:12]))


ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("threads:", json.dumps(sorted(q.get() for _ in ts)))

with tempfile.TemporaryDirectory() as tmp:
    with open(os.path.join(tmp, "x.txt"), "w") as f:
        f.write("data " * 1000)
    with open(os.path.join(tmp, "x.txt")) as f:
        d = f.read()
print("file:", len(d), zlib.crc32(d.encode()))

big = bytearray(32 << 20)
for i in range(0, len(big), 4096):
    big[i] = (i >> 12) & 0xff
print("mem:", sum(big[::4096]))
