#!/bin/sh
# Every header under src/ and include/ compiles on its own (STYLE.md §3:
# self-contained headers).  Usage: check_headers.sh SOURCE_DIR BUILD_DIR CC
set -u
src=$1 build=$2 cc=${3:-cc}
fail=0 n=0
for h in $(cd "$src" && find src include -name '*.h' | sort); do
    n=$((n + 1))
    if ! echo "#include \"$h\"" | "$cc" -std=gnu11 -D_GNU_SOURCE -Wall -Wextra \
        -Werror -fsyntax-only -I"$src" -I"$src/include" -I"$src/src" \
        -I"$build/gen" -x c - 2>/tmp/samsa-hdr.$$; then
        echo "not self-contained: $h"
        sed 's/^/    /' /tmp/samsa-hdr.$$ | head -5
        fail=$((fail + 1))
    fi
done
rm -f /tmp/samsa-hdr.$$
echo "headers: $n checked, $fail not self-contained"
[ "$fail" -eq 0 ]
