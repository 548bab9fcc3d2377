#!/usr/bin/env python3
"""Compare an ext4 image with a manifest (mkimage's text form), field by field, with debugfs.

usage: 40-image-check.py IMAGE MANIFEST TREE SDE [SKIP_PREFIX...]
       40-image-check.py --list IMAGE PATHS   (print "path type mode uid gid size target" for
                                              each path in the file PATHS, for diffing images)
Every entry is checked for type, mode, owner, mtime (clamped to SDE), link count (for files),
size and content (regular files, compared with TREE), link target, device numbers and
xattrs. Files over 64 MiB are checked for size only. Entries under a SKIP_PREFIX are only counted (the caller checks big directories).
Exits 1 with one line per mismatch.
"""
import os
import re
import subprocess
import sys
import tempfile

BIG = 64 << 20  # larger files: size only (the caller checks their blocks)
TYPES = {'f': 'regular', 'd': 'directory', 'l': 'symlink', 'c': 'character special',
         'b': 'block special', 'p': 'FIFO', 's': 'socket'}


def unescape(s):
    if s == b'%':
        return b''  # the root
    return re.sub(rb'%([0-9a-fA-F]{2})', lambda m: bytes([int(m.group(1), 16)]), s)


def load(path):
    out = []
    with open(path, 'rb') as f:
        for line in f:
            fl = line.rstrip(b'\n').split(b'\t')
            xattrs = {}
            if fl[11] != b'-':
                for kv in fl[11].split(b';'):
                    k, v = kv.split(b'=', 1)
                    xattrs[k.decode()] = bytes.fromhex(v.decode())
            out.append(dict(path=unescape(fl[0]), type=fl[1].decode(), mode=int(fl[2], 8),
                            uid=int(fl[3]), gid=int(fl[4]), mtime=int(fl[5]),
                            major=int(fl[6]), minor=int(fl[7]), size=int(fl[8]),
                            target=None if fl[9] == b'-' else unescape(fl[9]), xattrs=xattrs))
    return out


def quote(p):
    return b'"/' + p.replace(b'"', b'\\"') + b'"'


def debugfs(image, cmds):
    with tempfile.NamedTemporaryFile() as f:
        f.write(b'\n'.join(cmds) + b'\n')
        f.flush()
        out = subprocess.run(['debugfs', '-f', f.name, image], capture_output=True).stdout
    # `cat` output has no newline, so the next echoed command may share its line.
    parts = out.split(b'debugfs: ')[1:]
    return [p.split(b'\n', 1)[1] if b'\n' in p else b'' for p in parts]


def listing(image, pathsfile):
    paths = [p for p in open(pathsfile, 'rb').read().split(b'\n') if p]
    cmds = []
    for p in paths:
        cmds += [b'stat ' + quote(p), b'cat ' + quote(p)]
    outs = debugfs(image, cmds)
    for i, p in enumerate(paths):
        st, body = outs[2 * i], outs[2 * i + 1]
        kind = field(st, rb'Type: ([a-zA-Z ]+?)\s{2,}')
        size = field(st, rb'Size: (\d+)') if kind != 'directory' else '-'
        target = b'-'
        if kind == 'symlink':
            fast = re.search(rb'Fast link dest: "(.*)"', st, re.S)
            target = fast.group(1) if fast else body
        dev = field(st, rb'Device major/minor number: ([0-9:]+)') or '-'
        sys.stdout.buffer.write(b' '.join([p, str(kind).encode(),
                                           str(field(st, rb'Mode:\s+(\d+)')).encode(),
                                           str(field(st, rb'User:\s+(-?\d+)')).encode(),
                                           str(field(st, rb'Group:\s+(\d+)')).encode(),
                                           size.encode(), dev.encode(),
                                           str(field(st, rb'Links: (\d+)')).encode(),
                                           target]) + b'\n')


def main():
    if sys.argv[1] == '--list':
        return listing(sys.argv[2], sys.argv[3])
    image, mfile, tree, sde = sys.argv[1:5]
    sde = int(sde)
    skip = [p.encode() for p in sys.argv[5:]]
    entries = [e for e in load(mfile) if not any(e['path'].startswith(s) for s in skip)]
    by_path = {e['path']: e for e in load(mfile)}
    links = {}
    for e in by_path.values():
        if e['type'] == 'h':
            links[e['target']] = links.get(e['target'], 1) + 1
    tmp = tempfile.mkdtemp()
    cmds = []
    for i, e in enumerate(entries):
        cmds.append(b'stat ' + quote(e['path']))
        if e['type'] in 'fh' and e['size'] <= BIG:
            cmds.append(b'dump ' + quote(e['path']) + b' ' + os.path.join(tmp, str(i)).encode())
        elif e['type'] == 'l':
            cmds.append(b'cat ' + quote(e['path']))
        else:
            cmds.append(b'stat ' + quote(e['path']))
    outs = debugfs(image, cmds)
    bad = []
    for i, e in enumerate(entries):
        st, extra = outs[2 * i], outs[2 * i + 1]
        name = e['path'].decode(errors='replace')
        if b'File not found' in st or b'Type:' not in st:
            bad.append(f'{name}: missing from the image')
            continue
        real = by_path[e['target']] if e['type'] == 'h' else e
        check(bad, name, st, extra, real, links.get(e['target'] if e['type'] == 'h' else
                                                   e['path'], 1), sde, tree, tmp, i)
    for b in bad:
        print(b)
    print(f'checked {len(entries)} entries, {len(bad)} mismatches', file=sys.stderr)
    sys.exit(1 if bad else 0)


def field(st, pat):
    m = re.search(pat, st)
    return m.group(1).decode() if m else None


def check(bad, name, st, extra, e, nlink, sde, tree, tmp, i):
    def expect(what, got, want):
        if str(got) != str(want):
            bad.append(f'{name}: {what} is {got}, manifest says {want}')
    expect('type', field(st, rb'Type: ([a-zA-Z ]+?)\s{2,}'), TYPES[e['type']])
    mode = field(st, rb'Mode:\s+(\d+)')
    expect('mode', mode and '%04o' % int(mode, 8), '%04o' % e['mode'])
    uid = field(st, rb'User:\s+(-?\d+)')  # debugfs prints it signed
    expect('uid', uid and int(uid) & 0xffffffff, e['uid'])
    expect('gid', field(st, rb'Group:\s+(\d+)'), e['gid'])
    mt = field(st, rb'mtime: (0x[0-9a-f]+)')
    expect('mtime', int(mt, 16) if mt else None, min(e['mtime'], sde))
    for t in ('ctime', 'atime', 'crtime'):
        v = field(st, rb'\n *' + t.encode() + rb': (0x[0-9a-f]+)')
        expect(t, int(v, 16) if v else None, sde)
    if e['type'] != 'd':
        expect('links', field(st, rb'Links: (\d+)'), nlink)
    if e['type'] == 'f' and e['size'] > BIG:
        expect('size', field(st, rb'Size: (\d+)'), e['size'])
    elif e['type'] == 'f':
        data = open(os.path.join(tree, e['path'].decode('utf-8', 'surrogateescape')),
                    'rb').read()
        got = open(os.path.join(tmp, str(i)), 'rb').read()
        expect('size', field(st, rb'Size: (\d+)'), len(data))
        if got != data:
            bad.append(f'{name}: content differs from the tree')
    if e['type'] == 'l':
        expect('target length', field(st, rb'Size: (\d+)'), len(e['target']))
        fast = re.search(rb'Fast link dest: "(.*)"', st, re.S)
        got = fast.group(1) if fast else extra
        if got != e['target']:
            bad.append(f'{name}: link target differs ({len(got)} bytes)')
    if e['type'] in 'cb':
        expect('device', field(st, rb'Device major/minor number: ([0-9:]+)'),
               '%02d:%02d' % (e['major'], e['minor']))
    for k, v in e['xattrs'].items():
        if k.startswith('system.posix_acl_'):
            v = b'x' * (4 + (len(v) - 4) // 8 * 8 - 4 * sum(  # ext4's short entries
                1 for j in range(4, len(v), 8) if v[j] in (1, 4, 0x10, 0x20)))
        m = re.search(rb'  ' + re.escape(k.encode()) + rb' \((\d+)\)', st)
        if not m or int(m.group(1)) != len(v):
            bad.append(f'{name}: xattr {k} missing or of the wrong size')


if __name__ == '__main__':
    main()
