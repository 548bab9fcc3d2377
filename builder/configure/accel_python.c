/*
 * python3.X as a twin (accel.h), for py_compile only (and dh-python's two questions of the
 * interpreter, execshim.c): the guard the native interpreter runs instead of py_compile, and what
 * its record says afterwards.
 *
 * Why the worker's byte code is the same natively: the .py files, py_compile and importlib are
 * the target's own (the twin brings only the interpreter, of the same source version); marshal
 * writes ints, floats and lengths in fixed little-endian widths, sorts a frozenset's elements by
 * their bytes (CPython >= 3.11: no hash order, whose width is 32 bits on armhf), and FLAG_REF
 * depends on reference counts the same compiler code makes on every machine. What the compiler
 * computes itself goes through the C library only for powers other than int ** int >= 0 and
 * complex arithmetic (pow(), hypot(), ...; +, -, *, / are correctly rounded IEEE 754 on both),
 * so a file that folds one is the target interpreter's to compile, as is any file the native run
 * cannot compile. The guard is Python: it must see the tree's own source and site exactly as the
 * worker would.
 */
#include "accel.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "execprof.h"
#include "lib/beneath.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/readfile.h"
#include "lib/str.h"
#include "lib/strv.h"

#define LIST_MAX (64u << 20) /* one package's file list read at most */

/*
 * argv: GUARD QEMU FILE ARGV0 ARGS (execshim_native_argv), run with py_compile's flags and -S:
 * the stdin form's site runs inside, its messages caught. The record is the exec profile's file
 * (execprof.h), which skips the guard's lines.
 */
static const char guard[] =
	"# mkimage: py_compile run natively (mkimage(7), Native tools), as dh-python's\n"
	"# worker runs it, \"python3.X [-O] -m py_compile -\" (names on stdin), or as the\n"
	"# interpreter's postinsts do, \"python3.X -E -S [-O] /usr/lib/python3.X/py_compile.py\n"
	"# FILE...\"; and dh-python's questions \"python3.X -c 'import imp;\n"
	"# print(imp.get_magic())'\" (or get_tag()), whose answers are built into the\n"
	"# interpreter of that version. A file is compiled here only when its byte code\n"
	"# cannot depend on the machine; one that might (a foldable power or complex\n"
	"# operation: the C library's pow() and friends; a set of constants where marshal\n"
	"# keeps hash order) or that fails here goes, with its like after it, to the\n"
	"# target's own interpreter under the emulator, in py_compile's order; that stops\n"
	"# at a failure as py_compile does. The stdin form's site runs here with its\n"
	"# messages caught: if it said anything, or a name is not plain ASCII, every file\n"
	"# is emulated. Emulated files are noted in the record mkimage reads.\n"
	"import sys\n"
	"\n"
	"QEMU, TARGET, ARGV0 = sys.argv[1:4]\n"
	"ORIG = sys.argv[4:]\n"
	"QUESTION = ORIG[0] == '-c'\n"
	"STDIN = ORIG[-3:] == ['-m', 'py_compile', '-']\n"
	"# what the emulated interpreter is given before the names (or '-')\n"
	"PREFIX = ORIG[:-1] if STDIN or QUESTION else ORIG[:4 if ORIG[2] == '-O' else 3]\n"
	"RECORD = sys.path.pop(0) + '/profile'\n"
	"SORTED_SETS = sys.version_info >= (3, 11)\n"
	"OPAQUE = ('Name', 'Call', 'Attribute', 'Starred', 'Lambda', 'NamedExpr', 'Await',\n"
	"          'Yield', 'YieldFrom', 'ListComp', 'SetComp', 'DictComp', 'GeneratorExp',\n"
	"          'JoinedStr')\n"
	"\n"
	"\n"
	"def escaped(name):\n"
	"    return ''.join(c if '!' <= c <= '~' and c != '\\\\'\n"
	"                   else '\\\\x%02x' % (ord(c) & 255) for c in name)\n"
	"\n"
	"\n"
	"def record(names):\n"
	"    try:\n"
	"        with open(RECORD, 'ab', buffering=0) as f:\n"
	"            lines = ''.join('python %s\\n' % escaped(n) for n in names)\n"
	"            f.write(lines.encode('ascii'))\n"
	"    except OSError:\n"
	"        pass\n"
	"\n"
	"\n"
	"def emulate(names, data):\n"
	"    import subprocess\n"
	"    record(names)\n"
	"    cmd = [QEMU, '-0', ARGV0, TARGET] + PREFIX\n"
	"    if STDIN:\n"
	"        rc = subprocess.run(cmd + ['-'], input=data).returncode\n"
	"    else:\n"
	"        rc = subprocess.run(cmd + names).returncode\n"
	"    if rc < 0:\n"
	"        import os\n"
	"        import signal\n"
	"        signal.signal(-rc, signal.SIG_DFL)\n"
	"        os.kill(os.getpid(), -rc)\n"
	"    return rc\n"
	"\n"
	"\n"
	"def int_value(n):\n"
	"    import ast\n"
	"    if isinstance(n, ast.Constant) and type(n.value) in (int, bool):\n"
	"        return int(n.value)\n"
	"    unary = (ast.USub, ast.UAdd, ast.Invert)\n"
	"    if isinstance(n, ast.UnaryOp) and type(n.op) in unary:\n"
	"        v = int_value(n.operand)\n"
	"        if v is not None and type(n.op) is ast.USub:\n"
	"            return -v\n"
	"        if v is not None:\n"
	"            return ~v if type(n.op) is ast.Invert else v\n"
	"    return None\n"
	"\n"
	"\n"
	"def machine_free(tree):\n"
	"    import ast\n"
	"    for node in ast.walk(tree):\n"
	"        if not isinstance(node, (ast.BinOp, ast.Set)):\n"
	"            continue\n"
	"        inner = list(ast.walk(node))\n"
	"        if any(type(n).__name__ in OPAQUE for n in inner):\n"
	"            continue\n"
	"        if isinstance(node, ast.Set):\n"
	"            if len(node.elts) > 1 and not SORTED_SETS:\n"
	"                return False\n"
	"            continue\n"
	"        if any(isinstance(n, ast.Constant) and isinstance(n.value, complex)\n"
	"               for n in inner):\n"
	"            return False\n"
	"        # int ** int >= 0 is exact; any other power ends in pow()\n"
	"        if isinstance(node.op, ast.Pow) and (int_value(node.left) is None or\n"
	"                                             (int_value(node.right) or 0) < 0 or\n"
	"                                             int_value(node.right) is None):\n"
	"            return False\n"
	"    return True\n"
	"\n"
	"\n"
	"def vouched(name):\n"
	"    import ast\n"
	"    try:\n"
	"        with open(name, 'rb') as f:\n"
	"            return machine_free(ast.parse(f.read(), name))\n"
	"    except BaseException:\n"
	"        return False\n"
	"\n"
	"\n"
	"def compiled(name, depth=16):\n"
	"    # deeper than py_compile under runpy: the compiler's recursion limits count\n"
	"    # from here\n"
	"    if depth:\n"
	"        return compiled(name, depth - 1)\n"
	"    import py_compile\n"
	"    try:\n"
	"        py_compile.compile(name, doraise=True)\n"
	"    except BaseException:\n"
	"        return False\n"
	"    return True\n"
	"\n"
	"\n"
	"def start():\n"
	"    \"\"\"The names, and whether all must be emulated: site (which only the stdin\n"
	"    form runs) said something, a name is not plain ASCII, or one would be an\n"
	"    option to py_compile's parser.\"\"\"\n"
	"    import os\n"
	"    if not STDIN:\n"
	"        sys.path.insert(0, os.path.dirname(PREFIX[-1]))\n"
	"        names = ORIG[len(PREFIX):]\n"
	"        return names, None, any(not n.isascii() or n.startswith('-') for n in names)\n"
	"    said = run_site()\n"
	"    sys.path.insert(0, os.getcwd())\n"
	"    data = sys.stdin.buffer.read()\n"
	"    names = data.decode('ascii', 'replace').split('\\n')\n"
	"    if names[-1] == '':\n"
	"        names.pop()\n"
	"    return names, data, bool(said) or not data.isascii() or b'\\r' in data\n"
	"\n"
	"\n"
	"def run_site():\n"
	"    \"\"\"site as the interpreter runs it at startup, its messages caught: what it\n"
	"    said, or ''.\"\"\"\n"
	"    import io\n"
	"    out, sys.stderr = sys.stderr, io.StringIO()\n"
	"    try:\n"
	"        import site\n"
	"        site.main()\n"
	"        said = sys.stderr.getvalue()\n"
	"    except BaseException as e:\n"
	"        said = repr(e) or 'error'\n"
	"    sys.stderr = out\n"
	"    return said\n"
	"\n"
	"\n"
	"def answer():\n"
	"    \"\"\"python3.X -c QUESTION as -c runs it: a fresh __main__, sys.argv ['-c'],\n"
	"    path0 ''.\"\"\"\n"
	"    import builtins\n"
	"    if run_site():\n"
	"        fall_back()\n"
	"    sys.argv[:] = ['-c']\n"
	"    sys.path.insert(0, '')\n"
	"    code = compile(ORIG[1], '<string>', 'exec')\n"
	"    exec(code, {'__name__': '__main__', '__doc__': None, '__builtins__': builtins})\n"
	"    return 0\n"
	"\n"
	"\n"
	"def fall_back():\n"
	"    \"\"\"Before anything is read or written: all of it to the emulated\n"
	"    interpreter, as asked.\"\"\"\n"
	"    import os\n"
	"    os.execv(QEMU, [QEMU, '-0', ARGV0, TARGET] + ORIG)\n"
	"\n"
	"\n"
	"def main():\n"
	"    try:\n"
	"        # what may not import natively\n"
	"        import ast, builtins, io, signal, subprocess  # noqa: F401\n"
	"    except BaseException:\n"
	"        fall_back()\n"
	"    if QUESTION:\n"
	"        return answer()\n"
	"    names, data, all_emulated = start()\n"
	"    if all_emulated:\n"
	"        return emulate(names, data)\n"
	"    try:\n"
	"        import py_compile  # noqa: F401 (from the path py_compile's own run has)\n"
	"    except BaseException:\n"
	"        return emulate(names, data)\n"
	"    i = 0\n"
	"    while i < len(names):\n"
	"        if vouched(names[i]) and compiled(names[i]):\n"
	"            i += 1\n"
	"            continue\n"
	"        j = i + 1\n"
	"        while j < len(names) and not vouched(names[j]):\n"
	"            j += 1\n"
	"        data = ''.join(n + '\\n' for n in names[i:j]).encode('ascii')\n"
	"        rc = emulate(names[i:j], data)\n"
	"        if rc:\n"
	"            return rc\n"
	"        i = j\n"
	"    return 0\n"
	"\n"
	"\n"
	"sys.exit(main())\n";

int accel_python_write(const char *dir)
{
	char *path = xasprintf("%s/mkimage-accel/pycompile.py", dir);
	int ret = fsutil_write_atomic(path, guard, sizeof(guard) - 1);

	free(path);
	return ret;
}

/* "\\xHH" escapes (execprof.h) undone in place; 0, or -1 for a malformed one. */
static int unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		unsigned v;

		if (*s != '\\') {
			*w++ = *s;
			continue;
		}
		if (s[1] != 'x' || !isxdigit((unsigned char)s[2]) ||
		    !isxdigit((unsigned char)s[3]) || sscanf(s + 2, "%2x", &v) != 1 || !v)
			return -1;
		*w++ = (char)v;
		s += 3;
	}
	*w = 0;
	return 0;
}

/* The files the guard left to the emulated interpreter, from the record's "python " lines. */
static void emulated_files(const char *record, struct strv *files)
{
	struct buf text = { 0 };
	const char *kind = NULL;
	char *line, *save = NULL;

	if (readfile_read(record, EXECPROF_MAX_BYTES + 4096, &text, &kind) < 0 || !text.p)
		return;
	for (line = strtok_r(text.p, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (str_starts_with(line, "python /") && !unescape(line + 7) &&
		    !strv_contains(files, line + 7))
			strv_push(files, line + 7);
	buf_release(&text);
}

/* Whether package list `text` (one path a line) names one of `files`. */
static int lists_any(const char *text, size_t len, const struct strv *files)
{
	const char *s = text, *end = text + len;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = (size_t)((nl ? nl : end) - s);

		for (size_t i = 0; i < files->n; i++)
			if (strlen(files->v[i]) == n && !memcmp(files->v[i], s, n))
				return 1;
		s += n + 1;
	}
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The packages (info/NAME.list, NAME as dpkg writes it) owning any of `files`. */
static void owners(int rootfd, const struct strv *files, struct strv *pkgs)
{
	int fd = beneath_open(rootfd, "var/lib/dpkg/info", O_RDONLY | O_DIRECTORY, 0);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		struct buf text = { 0 };
		const char *kind = NULL;
		int lfd;

		if (n <= 5 || strcmp(de->d_name + n - 5, ".list"))
			continue;
		lfd = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		/* readfile_read_fd() closes lfd */
		if (lfd >= 0 && !readfile_read_fd(lfd, LIST_MAX, &text, &kind) && text.p &&
		    lists_any(text.p, text.len, files))
			strv_push_take(pkgs, xstrndup(de->d_name, n - 5));
		buf_release(&text);
	}
	closedir(d);
	if (pkgs->n)
		qsort(pkgs->v, pkgs->n, sizeof(*pkgs->v), by_name);
}

void accel_python_emulated(const struct accel *a, struct strv *pkgs)
{
	struct strv files = { 0 };
	int rootfd;

	if (!a->python || !a->profile)
		return;
	emulated_files(a->profile, &files);
	rootfd = files.n ? open(a->root, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	if (rootfd >= 0) {
		owners(rootfd, &files, pkgs);
		close(rootfd);
	}
	if (files.n) {
		char *names = strv_join(pkgs, ", ");

		log_info("native tools: python: %zu files byte-compiled by the emulated "
			 "interpreter (their byte code could depend on the machine, or the native "
			 "run could not compile them), of %s", files.n,
			 pkgs->n ? names : "no package");
		free(names);
	}
	strv_release(&files);
}
