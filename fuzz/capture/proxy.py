# Capturing TCP proxy: every client->broker byte stream is written to OUT/<n>.bin (whole frames only).
import socket, threading, sys, os, itertools
listen, upstream, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
os.makedirs(out, exist_ok=True)
counter = itertools.count()
def pipe(src, dst, rec):
    try:
        while True:
            b = src.recv(65536)
            if not b: break
            if rec is not None: rec.extend(b)
            dst.sendall(b)
    except OSError: pass
    finally:
        try: dst.shutdown(socket.SHUT_WR)
        except OSError: pass
def handle(c):
    u = socket.create_connection(("127.0.0.1", upstream))
    rec = bytearray()
    t = threading.Thread(target=pipe, args=(u, c, None)); t.start()
    pipe(c, u, rec); t.join(5)
    with open(os.path.join(out, "%04d.bin" % next(counter)), "wb") as f: f.write(rec)
    c.close(); u.close()
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", listen)); s.listen(64)
while True:
    c, _ = s.accept(); threading.Thread(target=handle, args=(c,), daemon=True).start()
