# `make install` installs the program as mkimage-debian (with a mkimage link unless MKIMAGE_LINK=0),
# the manuals, the example recipes beside the hooks they name, and the bash completion. The
# completion completes what --help lists: options, --until's stages, --limit's names; recipe
# files (*.cfg) and directories as the argument, lock files after --locked=. A `mkimage` that is
# U-Boot's gets plain file names, not our options.
. "$(dirname "$0")/lib.sh"
unset MAKEFLAGS MFLAGS MAKELEVEL # run from make check: sub-makes must not print directories

for link in 1 0; do
	make -s -C "$TOP" install DESTDIR="$T/inst$link" PREFIX=/usr MKIMAGE_LINK=$link >/dev/null
done
I=$T/inst1/usr
for f in bin/mkimage-debian lib/mkimage/mkimage-exec share/man/man1/mkimage-debian.1 \
	share/man/man5/mkimage.cfg.5 share/man/man7/mkimage.7 \
	share/bash-completion/completions/mkimage-debian share/bash-completion/completions/mkimage \
	share/doc/mkimage/examples/recipes/arm-board.cfg share/doc/mkimage/examples/hooks/service-user.sh \
	share/doc/mkimage/examples/recipes/overlay/boot-report/usr/local/sbin/boot-report; do
	[ -e "$I/$f" ] || fail "make install: no /usr/$f"
done
[ "$(readlink "$I/bin/mkimage")" = mkimage-debian ] || fail "make install: mkimage is no link to mkimage-debian"
[ "$(readlink "$I/share/man/man1/mkimage.1")" = mkimage-debian.1 ] || fail "make install: no mkimage.1 link"
[ ! -e "$T/inst0/usr/bin/mkimage" ] && [ ! -e "$T/inst0/usr/share/man/man1/mkimage.1" ] ||
	fail "make install MKIMAGE_LINK=0 installed mkimage"
"$I/bin/mkimage-debian" --version | grep -qx "mkimage $(make -s -C "$TOP" --no-print-directory version)" ||
	fail "the installed --version is not the Makefile's version: $("$I/bin/mkimage-debian" --version)"
# the example's hook is where the recipe names it
(cd "$I/share/doc/mkimage/examples/recipes" &&
	grep -o '"\.\./hooks/[^"]*"' arm-board.cfg | tr -d '"' | xargs -r ls >/dev/null) ||
	fail "the example recipe's hook is not where it says"

command -v bash >/dev/null || skip "bash missing"
mkdir -p "$T/w/recipes" "$T/bin"
touch "$T/w/recipes/board.cfg" "$T/w/recipes/notes.txt" "$T/w/old.lock"
ln -s "$MKIMAGE" "$T/bin/mkimage-debian"
printf '#!/bin/sh\necho "Usage: mkimage [-x] -A arch -O os -T type"; exit 1\n' >"$T/bin/u-boot-mkimage"
chmod +x "$T/bin/u-boot-mkimage"
mkdir -p "$T/uboot" && ln -s "$T/bin/u-boot-mkimage" "$T/uboot/mkimage"

# complete CMD WORD...: the completions of the last WORD, sorted, one line.
complete_words() {
	(cd "$T/w" && PATH=$T/bin:$PATH bash -c '
		. "$0"
		COMP_WORDS=("${@}"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
		_mkimage_debian "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		[ ${#COMPREPLY[@]} = 0 ] || printf "%s\n" "${COMPREPLY[@]}" | LC_ALL=C sort | tr "\n" " "
	' "$I/share/bash-completion/completions/mkimage" "$@")
}
want() {
	local got
	got=$(complete_words "${@:2}")
	[ "$got" = "$1" ] || fail "completing '${*:2}': '$got', not '$1'"
}

want "--until " mkimage-debian --unt
want "--verbose --verify-reproducible --version " mkimage-debian --ver
want "configure fetch image indexes resolve sources unpack " mkimage-debian --until ""
want "image indexes " mkimage-debian --until i
want "deb-control= deb-data= deb-entries= deb-size= " mkimage-debian --limit deb-
want "recipes " mkimage-debian rec
want "recipes/board.cfg " mkimage-debian recipes/
want "old.lock " mkimage-debian --locked = o
want "old.lock recipes " mkimage-debian --locked =
# every option --help names is offered, and nothing else
opts=$("$MKIMAGE" --help | grep -oE -- '--[a-z][a-z-]*' | LC_ALL=C sort -u | tr '\n' ' ')
want "$opts" mkimage-debian --
# U-Boot's mkimage: file names, never our options
want "" "$T/uboot/mkimage" --unt
want "recipes/board.cfg recipes/notes.txt " "$T/uboot/mkimage" recipes/
