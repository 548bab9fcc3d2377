# The manual pages: groff and lexgrog find nothing wrong, mkimage(1) names every option and exit
# status --help lists and no other, mkimage.cfg(5) every key the recipe parser accepts (its key
# table, recipe_keys[], as tests/tools/recipe-keys prints it: a key added there must be
# documented here too).
. "$(dirname "$0")/lib.sh"
RECIPE_KEYS=${RECIPE_KEYS:-$TOP/build/tools/recipe-keys}

command -v lexgrog >/dev/null && command -v groff >/dev/null || skip "man-db or groff missing (make test-deps)"
for page in "$TOP/builder/man/mkimage.1" "$TOP/builder/man/mkimage.cfg.5" "$TOP/builder/man/mkimage.7"; do
	warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null) || fail "man cannot render '$page'"
	[ -z "$warnings" ] || { echo "$warnings" >&2; fail "groff warns about '$page'"; }
	lexgrog "$page" >/dev/null || fail "lexgrog finds no NAME section in '$page'"
done

# Rendered text, so that "\-\-output" in the source counts as "--output".
MANWIDTH=200 man -l "$TOP/builder/man/mkimage.1" 2>/dev/null | col -bx >"$T/mkimage.1.txt"
MANWIDTH=200 man -l "$TOP/builder/man/mkimage.cfg.5" 2>/dev/null | col -bx >"$T/mkimage.cfg.5.txt"

expect_ok "$MKIMAGE" --help
cp "$T/out" "$T/help.txt"
# The options: --help is made from main.c's option table; mkimage(1) documents each one...
opts=$(sed '/^Exit status:/,$d' "$T/help.txt" | grep -oE '(^|[ ,])--?[a-zA-Z][a-z-]*' |
	sed 's/^[ ,]//' | sort -u)
[ "$(echo "$opts" | wc -l)" -ge 20 ] || fail "found only $(echo "$opts" | wc -l) options in --help"
# ...each as a term of its own in OPTIONS ("       -o, --output FILE"), not merely mentioned.
sed -n '/^OPTIONS/,/^EXIT STATUS/p' "$T/mkimage.1.txt" >"$T/options.txt"
for o in $opts; do
	grep -qE -- "^ +(-[a-zA-Z], )?$o([ ,=[]|$)" "$T/options.txt" ||
		fail "mkimage(1) does not document '$o' in OPTIONS"
done
# ...and documents no option --help lacks: every term of OPTIONS is one --help lists.
terms=$(sed -nE 's/^ {7}((-[a-zA-Z]), )?(--[a-z-]+).*/\2 \3/p' "$T/options.txt")
[ "$(echo $terms | wc -w)" -ge 20 ] || fail "found only $(echo $terms | wc -w) options in mkimage(1)"
for o in $terms; do
	echo "$opts" | grep -qxe "$o" || fail "mkimage(1) documents '$o', which --help does not list"
done

# The exit statuses: --help prints err.c's table ("  3    repository or signature error");
# mkimage(1)'s EXIT STATUS has a term for each of them and for no other.
help_codes=$(sed -n '/^Exit status:/,$p' "$T/help.txt" | sed -nE 's/^  ([0-9]+) .*/\1/p')
sed -n '/^EXIT STATUS/,/^ENVIRONMENT/p' "$T/mkimage.1.txt" >"$T/exit.txt"
man_codes=$(sed -nE 's/^ {7}([0-9]+)( .*)?$/\1/p' "$T/exit.txt")
[ "$(echo $help_codes | wc -w)" -ge 10 ] || fail "found only $(echo $help_codes | wc -w) exit statuses in --help"
[ "$(echo $help_codes)" = "$(echo $man_codes)" ] ||
	fail "exit statuses: --help lists '$(echo $help_codes)', mkimage(1) '$(echo $man_codes)'"

# Every key of the parser's table, by its name: "image.devices.mode" is documented as "mode".
[ -x "$RECIPE_KEYS" ] || fail "'$RECIPE_KEYS' is missing (make tools)"
keys=$("$RECIPE_KEYS" | cut -f1 | sed 's/.*\.//' | sort -u)
[ "$(echo "$keys" | wc -l)" -ge 30 ] || fail "found only $(echo "$keys" | wc -l) recipe keys in the key table"
for k in $keys; do
	grep -qE "^ +$k \(" "$T/mkimage.cfg.5.txt" || fail "mkimage.cfg(5) does not document the recipe key '$k'"
done
