#!/bin/sh
# The whole test suite: C unit tests of the primitives, then every busted spec under Lua 5.4.
# Ends with one line "N passed, N failed"; exits non-zero on any failure.
#   ASCOPE_BUILD   build folder (default build)
#   ASCOPE_RUNNER  lua (stock lua5.4 + build/ascope_core.so, default), host (the ascope
#                  executable runs busted), valgrind (host under valgrind)
# Arguments: spec folders or files (default: spec)
B=${ASCOPE_BUILD:-build}
RUNNER=${ASCOPE_RUNNER:-lua}
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 2
export ASCOPE_BIN="$TOP/$B/ascope"
export LUA_PATH="$TOP/lua/?.lua;$TOP/lua/?/init.lua;$TOP/spec/?.lua;;"
export LUA_CPATH="$TOP/$B/?.so;;"
passed=0
failed=0

if [ $# -eq 0 ] || [ "$1" = spec ]; then
  for t in "$B"/ctest/test_*; do
    [ -x "$t" ] || continue
    out=$("$t" 2>&1)
    rc=$?
    line=$(printf '%s\n' "$out" | grep -E '^C: [0-9]+ passed, [0-9]+ failed$' | tail -n 1)
    p=$(printf '%s' "$line" | sed -E 's/^C: ([0-9]+) passed.*/\1/')
    f=$(printf '%s' "$line" | sed -E 's/.* ([0-9]+) failed$/\1/')
    if [ -z "$line" ]; then p=0; f=1; fi
    if [ $rc -ne 0 ] && [ "$f" = 0 ]; then f=1; fi
    printf '%s\n' "$out" | grep -v '^ok ' | sed "s|^|$(basename "$t"): |"
    passed=$((passed + p))
    failed=$((failed + f))
  done
fi

[ $# -eq 0 ] && set -- spec
json=$(mktemp)
case "$RUNNER" in
  host) "$B/ascope" run /usr/bin/busted -o json "$@" >"$json" ;;
  valgrind) valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
      --errors-for-leak-kinds=definite,indirect "$B/ascope" run /usr/bin/busted -o json "$@" >"$json" ;;
  *) lua5.4 /usr/bin/busted -o json "$@" >"$json" ;;
esac
brc=$?
counts=$("$B/ascope" run spec/busted_counts.lua "$json")
crc=$?
rm -f "$json"
p=$(printf '%s\n' "$counts" | tail -n 1 | cut -d' ' -f1)
f=$(printf '%s\n' "$counts" | tail -n 1 | cut -d' ' -f2)
printf '%s\n' "$counts" | sed '$d'
if [ $crc -ne 0 ] || [ -z "$p" ]; then
  echo "busted produced no readable result (exit $brc)"
  p=0
  f=$((f + 1))
elif [ $brc -ne 0 ] && [ "$f" = 0 ]; then
  echo "busted exited with $brc"
  f=1
fi
passed=$((passed + p))
failed=$((failed + f))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
