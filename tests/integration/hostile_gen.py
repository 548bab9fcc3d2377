#!/usr/bin/env python3
"""Hostile repository fixtures, made at test time in a few seconds (test 73).

usage:
  hostile_gen.py xzbomb OUT SIZE            Packages.xz of valid-looking stanzas that decompresses
                                            to SIZE bytes or more: one xz stream of 16 MiB of
                                            stanzas, repeated (xz allows concatenated streams)
  hostile_gen.py zerobomb OUT NAME ARCH SIZE
                                            a .deb whose data.tar.zst holds one file of SIZE
                                            zero bytes (SIZE a multiple of 128 KiB), written as
                                            one zstd frame of run-length blocks: a 64 GiB file
                                            costs 2 MB and no compression time
  hostile_gen.py xzbomb OUT SIZE big        the same, each stream declaring a 768 MiB
                                            dictionary (its data, made with a small one, decodes
                                            the same): a decoder that trusts it touches up to
                                            768 MiB as it decompresses
  hostile_gen.py xzdeb OUT NAME ARCH        a small .deb whose data.tar.xz declares a 768 MiB
                                            dictionary
  hostile_gen.py manyfiles OUT NAME ARCH N  a .deb with N empty files in directories of 1000,
                                            written as raw ustar headers (1 000 000 in ~3 s)
"""
import gzip
import io
import lzma
import subprocess
import sys
import tarfile
import zlib

MTIME = 1700000000
BLOCK = 128 << 10  # zstd's largest block


def ustar(name, size=0, typ=b"0", mode=0o644):
    h = bytearray(512)
    n = name.encode()
    h[0:len(n)] = n
    h[100:108] = b"%07o\0" % mode
    h[108:116] = b"0000000\0"
    h[116:124] = b"0000000\0"
    if size < 8 << 30:
        h[124:136] = b"%011o\0" % size
    else:  # GNU base-256: what tar writes for files of 8 GiB and more
        h[124:136] = b"\x80" + size.to_bytes(11, "big")
    h[136:148] = b"%011o\0" % MTIME
    h[148:156] = b" " * 8
    h[156:157] = typ
    h[257:265] = b"ustar\x0000"
    h[265:269] = b"root"
    h[297:301] = b"root"
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h)


def zstd(data):
    return subprocess.run(["zstd", "-q", "-c", "-1"], input=data, stdout=subprocess.PIPE,
                          check=True).stdout


def ar_member(name, size):
    return ("%-16s%-12d%-6d%-6d%-8s%-10d`\n" % (name, 0, 0, 0, "100644", size)).encode()


def control_tar(name, arch):
    ctl = ("Package: %s\nVersion: 1.0\nArchitecture: %s\nMaintainer: t <t@example.org>\n"
           "Description: hostile test package\n" % (name, arch)).encode()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tf:
        ti = tarfile.TarInfo("./control")
        ti.size, ti.mtime = len(ctl), MTIME
        tf.addfile(ti, io.BytesIO(ctl))
    return gzip.compress(buf.getvalue(), mtime=0)


def write_deb(out, name, arch, data_parts):
    """data_parts: a list of (bytes, times) whose concatenation is data.tar.zst."""
    size = sum(len(b) * n for b, n in data_parts)
    ctl = control_tar(name, arch)
    with open(out, "wb") as f:
        f.write(b"!<arch>\n" + ar_member("debian-binary", 4) + b"2.0\n")
        f.write(ar_member("control.tar.gz", len(ctl)) + ctl + (b"\n" if len(ctl) % 2 else b""))
        f.write(ar_member("data.tar.zst", size))
        for b, n in data_parts:
            for _ in range(n):
                f.write(b)
        if size % 2:
            f.write(b"\n")


def zstd_block(last, typ, size):
    return (last | typ << 1 | size << 3).to_bytes(3, "little")


def zstd_zeros_frame(prefix, zeros):
    """One zstd frame: `prefix` as raw blocks, then `zeros` zero bytes as run-length blocks."""
    out = [b"\x28\xb5\x2f\xfd", b"\x00", bytes([(17 - 10) << 3])]  # no size, 128 KiB window
    for i in range(0, len(prefix), BLOCK):
        part = prefix[i:i + BLOCK]
        out.append(zstd_block(0, 0, len(part)) + part)
    rle = zstd_block(0, 1, BLOCK) + b"\0"
    out.append(rle * (zeros // BLOCK))
    if zeros % BLOCK:
        out.append(zstd_block(0, 1, zeros % BLOCK) + b"\0")
    out.append(zstd_block(1, 0, 0))
    return b"".join(out)


def zerobomb(out, name, arch, size):
    size = int(size)
    assert size % BLOCK == 0
    head = b"".join(ustar(p, typ=b"5", mode=0o755) for p in
                    ("./", "./usr/", "./usr/share/", "./usr/share/%s/" % name))
    head += ustar("./usr/share/%s/zero" % name, size)
    write_deb(out, name, arch, [(zstd_zeros_frame(head, size + 1024), 1)])


def manyfiles(out, name, arch, n):
    n = int(n)
    parts = [ustar(p, typ=b"5", mode=0o755) for p in ("./", "./usr/", "./usr/share/",
                                                       "./usr/share/%s/" % name)]
    digits = [b"%03d" % i for i in range(1000)]
    for d in range((n + 999) // 1000):
        prefix = "./usr/share/%s/d%04d/" % (name, d)
        parts.append(ustar(prefix, typ=b"5", mode=0o755))
        base = ustar(prefix + "f000")
        cut = len(prefix) + 1
        pre, mid, tail = base[:cut], base[cut + 3:148], base[156:]
        bsum = int(base[148:154], 8) - 3 * ord("0")
        parts.append(b"".join(pre + digits[f] + mid + b"%06o\0 " % (bsum + sum(digits[f])) +
                              tail for f in range(min(1000, n - d * 1000))))
    parts.append(bytes(1024))
    write_deb(out, name, arch, [(zstd(b"".join(parts)), 1)])


def xzbomb(out, size, dictionary="small"):
    stanzas = b"".join(
        b"Package: filler-%d\nVersion: 1.0\nArchitecture: amd64\n"
        b"Maintainer: t <t@example.org>\nFilename: pool/main/f/filler-%d.deb\nSize: 1000\n"
        b"SHA256: %s\nDescription: filler\n\n" % (i, i, b"0" * 64) for i in range(10000))
    chunk = stanzas * ((16 << 20) // len(stanzas) + 1)
    stream = lzma.compress(chunk, format=lzma.FORMAT_XZ, preset=1)
    if dictionary == "big":
        stream = big_dict(stream)
    with open(out, "wb") as f:
        f.write(stream * (int(size) // len(chunk) + 1))


def big_dict(stream):
    """`stream` (one .xz stream from Python's lzma: one block, LZMA2) declaring a 768 MiB
    dictionary: the property byte of its block header set to 35 (3 << 28 bytes) and the header's
    CRC32 fixed. Made with a small dictionary, the data decodes the same either way."""
    b = bytearray(stream)
    i, size = 12, (stream[12] + 1) * 4
    assert stream[i + 1] & 0xC0 == 0 and stream[i + 2] == 0x21 and stream[i + 3] == 1
    b[i + 4] = 35
    b[i + size - 4:i + size] = zlib.crc32(bytes(b[i:i + size - 4])).to_bytes(4, "little")
    return bytes(b)


def xzdeb(out, name, arch):
    tar = b"".join(ustar(p, typ=b"5", mode=0o755) for p in ("./", "./usr/", "./usr/share/"))
    tar += ustar("./usr/share/%s" % name, 4) + b"data" + bytes(508) + bytes(1024)
    data = big_dict(lzma.compress(tar, format=lzma.FORMAT_XZ, preset=1))
    ctl = control_tar(name, arch)
    with open(out, "wb") as f:
        f.write(b"!<arch>\n" + ar_member("debian-binary", 4) + b"2.0\n")
        f.write(ar_member("control.tar.gz", len(ctl)) + ctl + (b"\n" if len(ctl) % 2 else b""))
        f.write(ar_member("data.tar.xz", len(data)) + data + (b"\n" if len(data) % 2 else b""))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {"xzbomb": xzbomb, "zerobomb": zerobomb, "manyfiles": manyfiles, "xzdeb": xzdeb}[cmd](*args)


main()
