#!/usr/bin/env python3
"""Compare two tar archives entry by entry: mkimage's tar of a view against sqfs2tar of its
squashfs. Type (hard links count as files: sqfs2tar and tar pick different first names), mode,
owner, mtime, symlink target, device numbers, xattrs, and sizes of all but regular files. The
xattrs of a hard-link member are not compared: sqfs2tar writes none on one (the inode's are on
its first name), so both sides compare what the file member of the group carries.
Usage: sqfs_compare.py REF.tar SQUASHFS.tar [IGNORED-PATH]..."""
import sys
import tarfile


def entries(path, ignored):
    d = {}
    with tarfile.open(path) as t:
        for m in t.getmembers():
            name = m.name[2:] if m.name.startswith('./') else m.name
            name = name.rstrip('/')
            if name in ('', '.') or name in ignored:
                continue
            x = {k: v for k, v in m.pax_headers.items() if k.startswith('SCHILY.xattr.')}
            dev = m.ischr() or m.isblk()
            reg = m.islnk() or m.isreg()
            d[name] = ('file' if reg else m.type, m.mode, m.uid, m.gid, int(m.mtime),
                       m.linkname if m.issym() else '', m.devmajor if dev else 0,
                       m.devminor if dev else 0, 'link' if m.islnk() else sorted(x.items()),
                       None if reg else m.size)
    return d


def main():
    ignored = set(sys.argv[3:])
    a, b = entries(sys.argv[1], ignored), entries(sys.argv[2], ignored)
    bad = 0
    for k in sorted(set(a) | set(b)):
        x, y = a.get(k), b.get(k)
        if x and y and 'link' in (x[8], y[8]):
            x, y = x[:8] + x[9:], y[:8] + y[9:]
        if x != y:
            print('differs: %s\n  tar:      %s\n  squashfs: %s' % (k, a.get(k), b.get(k)))
            bad = 1
    print('%d entries compared' % len(a))
    return bad


sys.exit(main())
