#!/bin/sh
# lint/fuzz_corpus: every fuzz target (tests/fuzz/fuzz_*.c) has a seed
# corpus folder with at least one input; scripts/fuzz.sh hands
# tests/fuzz/corpus/<target>/ to libFuzzer, which stops with an error
# when the folder is missing, so `make fuzz` (and CI) would fail.
# Usage: check_fuzz_corpus.sh SOURCE_DIR
set -eu
src=${1:?usage: check_fuzz_corpus.sh SOURCE_DIR}
bad=0
for f in "$src"/tests/fuzz/fuzz_*.c; do
    t=$(basename "$f" .c)
    d="$src/tests/fuzz/corpus/$t"
    if [ ! -d "$d" ] || [ -z "$(ls -A "$d")" ]; then
        echo "lint/fuzz_corpus: $t has no seed inputs in tests/fuzz/corpus/$t/" >&2
        bad=1
    fi
done
exit $bad
