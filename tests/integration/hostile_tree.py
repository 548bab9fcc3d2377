#!/usr/bin/env python3
"""Large hostile trees for the image writers, made at test time (test 127): plain os calls, no
subprocess per file, so that a few hundred thousand entries take seconds on tmpfs.

usage:
  hostile_tree.py fat DIR FILES DEPTH    under DIR: FILES files (every 7th a hard link to the one
                                         before it, every 100th a few KiB of data) in directories
                                         of 500, long mixed-case and non-ASCII names that need
                                         LFN entries and ~N short names, and a chain of DEPTH
                                         nested directories with a file at the bottom; prints
                                         the number of files and directories made
  hostile_tree.py sqfs DIR ENTRIES       under DIR: ENTRIES entries (files, hard links, symlinks,
                                         directories of 1000) whose names hold newlines, ESC
                                         sequences, tabs, backslashes, quotes, '%', non-UTF-8
                                         bytes; prints the number of entries made
  hostile_tree.py bigxattr MANIFEST N SIZE
                                         give the first N regular files of MANIFEST (mkimage's
                                         text manifest, rewritten in place) and their hard
                                         links an xattr user.big of SIZE bytes and user.more of
                                         1 KiB
"""
import os
import sys

MTIME = 1700000000


def put(path, data=b''):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    if data:
        os.write(fd, data)
    os.close(fd)


def fat(root, files, depth):
    made = dirs = 0
    d = None
    for i in range(files):
        if i % 500 == 0:
            d = os.path.join(root, 'Dir Nr %03d Ünïcode' % (i // 500))
            os.makedirs(d)
            dirs += 1
        name = 'A Long File Name number %07d with Mixed.Case.txt' % i if i % 3 else \
            'f%07d~1.efi' % i
        path = os.path.join(d, name)
        if i % 7 == 6:
            os.link(prev, path)
        else:
            put(path, (b'%07d ' % i) * 600 if i % 100 == 0 else b'%d\n' % i)
        prev = path
        made += 1
    d = root
    for level in range(depth):
        d = os.path.join(d, 'n%d' % (level % 10))
        os.mkdir(d)
        dirs += 1
    put(os.path.join(d, 'bottom.txt'), b'at the bottom\n')
    print(made + 1, dirs)


# Names a shell, a terminal or a line-based parser trips on; each made unique by a counter.
SQFS_NAMES = [b'new\nline', b'\x1b[31mred\x1b[0m', b'tab\there', b'back\\slash', b'"quoted\'',
              b'per%cent%0a', b'\xff\xfe not utf-8', b'\x7f del', b' lead and trail ',
              b'-dash', b'\xe2\x80\xae rtl override']


def sqfs(root, entries):
    root = os.fsencode(root)
    made, d, n = 0, None, len(SQFS_NAMES)
    target = None
    while made < entries:
        if made % 1000 == 0:
            d = os.path.join(root, b'd%04d\n%s' % (made // 1000, SQFS_NAMES[(made // 1000) % n]))
            os.mkdir(d)
            made += 1
            continue
        name = os.path.join(d, b'%s %d' % (SQFS_NAMES[made % n], made))
        kind = made % 10
        if kind == 8 and target:
            os.link(target, name)
        elif kind == 9:
            os.symlink(b'../target\nwith\x1b newline %d' % made, name)
        else:
            put(name, b'' if kind else b'%d\n' % made)
            target = name
        made += 1
    print(made)


def bigxattr(manifest, count, size):
    """The xattrs go on the first `count` regular files and on every hard link to them (an
    inode has one set of xattrs, whichever of its names the manifest lists)."""
    value = b';'.join([('user.big=' + (b'\xab' * size).hex()).encode(),
                       ('user.more=' + (b'm' * 1024).hex()).encode()])
    with open(manifest, 'rb') as f:
        rows = [line.rstrip(b'\n').split(b'\t') for line in f]
    chosen = set()
    for cols in rows:
        if len(chosen) < count and len(cols) == 12 and cols[1] == b'f':
            chosen.add(cols[0])
    for cols in rows:
        if len(cols) == 12 and (cols[0] in chosen or (cols[1] == b'h' and cols[9] in chosen)):
            cols[11] = value
    with open(manifest + '.tmp', 'wb') as f:
        f.writelines(b'\t'.join(cols) + b'\n' for cols in rows)
    os.rename(manifest + '.tmp', manifest)
    print(len(chosen))


def main():
    kind = sys.argv[1]
    if kind == 'fat':
        fat(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif kind == 'sqfs':
        sqfs(sys.argv[2], int(sys.argv[3]))
    elif kind == 'bigxattr':
        bigxattr(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
