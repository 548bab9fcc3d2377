#!/usr/bin/env python3
"""Build a .deb by hand (ar + tar via Python's tarfile), for hostile and unusual packages that
dpkg-deb refuses to build. Reads a JSON spec on stdin:

{"out": "x.deb", "control": "Package: x\\n...", "debian_binary": "2.0\\n",
 "control_name": "control.tar.xz", "data_name": "data.tar.xz", "truncate": 0, "pax": false,
 "members": [{"name": "./usr/", "type": "dir"}, {"name": "./usr/f", "data": "hi", "mode": 420},
             {"name": "./l", "type": "symlink", "target": "/etc"},
             {"name": "./h", "type": "hardlink", "target": "./usr/f"},
             {"name": "./dev/null", "type": "chr", "major": 1, "minor": 3},
             {"name": "./fifo", "type": "fifo"},
             {"name": "./x", "data": "", "xattrs": {"user.k": "v"}}]}   (xattrs need "pax": true)

The compression follows the member name's suffix; an unknown suffix stores the tar as is.
"""
import bz2, gzip, io, json, lzma, subprocess, sys, tarfile, time

TYPES = {"file": tarfile.REGTYPE, "dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE,
         "hardlink": tarfile.LNKTYPE, "chr": tarfile.CHRTYPE, "blk": tarfile.BLKTYPE,
         "fifo": tarfile.FIFOTYPE}


def tar_bytes(members, fmt=tarfile.GNU_FORMAT):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as tf:
        for m in members:
            ti = tarfile.TarInfo(m["name"])
            ti.type = TYPES[m.get("type", "file")]
            ti.mode = m.get("mode", 0o755 if ti.type == tarfile.DIRTYPE else 0o644)
            ti.uid, ti.gid = m.get("uid", 0), m.get("gid", 0)
            ti.uname, ti.gname = "root", "root"
            ti.mtime = m.get("mtime", 1700000000)
            ti.linkname = m.get("target", "")
            ti.devmajor, ti.devminor = m.get("major", 0), m.get("minor", 0)
            ti.pax_headers = {"SCHILY.xattr." + k: v for k, v in m.get("xattrs", {}).items()}
            data = m.get("data", "").encode()
            ti.size = len(data) if ti.type == tarfile.REGTYPE else 0
            tf.addfile(ti, io.BytesIO(data) if ti.size else None)
    return buf.getvalue()


def compress(name, raw):
    if name.endswith(".gz"):
        return gzip.compress(raw, mtime=0)
    if name.endswith(".xz"):
        return lzma.compress(raw, format=lzma.FORMAT_XZ)
    if name.endswith(".lzma"):
        return lzma.compress(raw, format=lzma.FORMAT_ALONE)
    if name.endswith(".bz2"):
        return bz2.compress(raw)
    if name.endswith(".zst"):
        return subprocess.run(["zstd", "-q", "-c"], input=raw, stdout=subprocess.PIPE,
                              check=True).stdout
    return raw


def ar_member(name, data):
    hdr = "%-16s%-12d%-6d%-6d%-8s%-10d`\n" % (name, 0, 0, 0, "100644", len(data))
    return hdr.encode() + data + (b"\n" if len(data) % 2 else b"")


def main():
    spec = json.load(sys.stdin)
    cname = spec.get("control_name", "control.tar.xz")
    dname = spec.get("data_name", "data.tar.xz")
    control = tar_bytes([{"name": "./", "type": "dir"},
                         {"name": "./control", "data": spec["control"]}] +
                        spec.get("control_members", []))
    out = b"!<arch>\n"
    out += ar_member("debian-binary", spec.get("debian_binary", "2.0\n").encode())
    out += ar_member(cname, compress(cname, control))
    fmt = tarfile.PAX_FORMAT if spec.get("pax") else tarfile.GNU_FORMAT
    out += ar_member(dname, compress(dname, tar_bytes(spec["members"], fmt)))
    if spec.get("truncate"):
        out = out[: len(out) - spec["truncate"]]
    with open(spec["out"], "wb") as f:
        f.write(out)


main()
