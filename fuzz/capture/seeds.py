import os, struct, sys, hashlib, collections, zlib
raw, root = sys.argv[1], sys.argv[2]
frames_dir = os.path.join(root, "broker_frames"); dec_dir = os.path.join(root, "decode_request"); pb_dir = os.path.join(root, "produce_batches")
for d in (frames_dir, dec_dir, pb_dir): os.makedirs(d, exist_ok=True)
def frames(b):
    i = 0
    while i + 4 <= len(b):
        n = struct.unpack(">i", b[i:i+4])[0]
        if n < 0 or i + 4 + n > len(b): break
        yield b[i:i+4+n]; i += 4 + n
per_key = collections.Counter(); streams = 0; prod = 0
for f in sorted(os.listdir(raw)):
    b = open(os.path.join(raw, f), "rb").read()
    fs = list(frames(b))
    if not fs: continue
    # a connection's stream, capped at 64 KiB (whole frames)
    out = bytearray()
    for fr in fs:
        if len(out) + len(fr) > 65536: break
        out += fr
    if out:
        h = hashlib.sha1(out).hexdigest()[:12]
        open(os.path.join(frames_dir, "conn-%s" % h), "wb").write(out); streams += 1
    for fr in fs:
        api, ver = struct.unpack(">hh", fr[4:8])
        key = (api, ver)
        if per_key[key] < 3 and len(fr) < 65536:
            per_key[key] += 1
            h = hashlib.sha1(fr).hexdigest()[:10]
            open(os.path.join(frames_dir, "req-%d-v%d-%s" % (api, ver, h)), "wb").write(fr)
            open(os.path.join(dec_dir, "req-%d-v%d-%s" % (api, ver, h)), "wb").write(fr[4:])
        if api == 0:
            # record batches inside a produce request: find magic-2 batches by scanning (base offset 0, magic 2)
            body = fr[4:]
            j = 0
            while j + 61 <= len(body):
                if body[j:j+8] == b"\0"*8 and body[j+16] == 2:
                    blen = struct.unpack(">i", body[j+8:j+12])[0]
                    if 49 <= blen and j + 12 + blen <= len(body):
                        batch = body[j:j+12+blen]
                        attrs = struct.unpack(">h", batch[21:23])[0]
                        count = struct.unpack(">i", batch[57:61])[0]
                        codec = attrs & 7
                        pid = struct.unpack(">q", batch[43:51])[0]
                        mode = codec | 8 | (128 if pid >= 0 else 0)
                        hdr = bytes([mode, min(count, 254), (attrs >> 3) & 0xf, (ver - 3) % 9 | (1 << 4),
                                     1 if pid >= 0 else 0, 0, 0, 0, 0, 0])
                        seed = hdr + batch[61:]
                        h = hashlib.sha1(seed).hexdigest()[:10]
                        open(os.path.join(pb_dir, "client-%d-%s" % (codec, h)), "wb").write(seed); prod += 1
                        j += 12 + blen; continue
                j += 1
# structured seeds: every codec x topic, records with keys, values and headers
def rec(k, v, hs):
    out = bytes([len(k)]) + k + bytes([len(v)]) + v + bytes([len(hs)])
    for hk, hv in hs: out += bytes([len(hk)]) + hk + bytes([len(hv)]) + hv
    return out
payload = rec(b"k1", b"value-1", [(b"h", b"x")]) + rec(b"k2", b"value-2", []) + rec(b"k3", b"v"*40, [(b"a", b"1"), (b"b", b"2")])
for codec in range(5):
    for topic in range(3):
        for ver in (3, 9, 11):
            for xerial in ((0, 64) if codec == 2 else (0,)):
                mode = codec | (topic << 4) | xerial
                hdr = bytes([mode, 0, 0, (ver - 3) | (1 << 4), 0, 0, 0, 0, 0, 0])
                open(os.path.join(pb_dir, "gen-c%d-t%d-v%d-x%d" % (codec, topic, ver, xerial)), "wb").write(hdr + payload)
# idempotent and transactional variants
open(os.path.join(pb_dir, "gen-idempotent"), "wb").write(bytes([128 | 4, 0, 0, 8 | (2 << 4), 7, 0, 0, 0, 0, 0]) + payload)
open(os.path.join(pb_dir, "gen-transactional"), "wb").write(bytes([128 | 1, 0, 2, 8 | (2 << 4), 7, 0, 0, 0, 0, 0]) + payload)
open(os.path.join(pb_dir, "gen-acks0"), "wb").write(bytes([3, 0, 0, 5, 0, 0, 0, 0, 0, 0]) + payload)
print("streams", streams, "request kinds", len(per_key), "produce batches", prod)
print(sorted(per_key))
