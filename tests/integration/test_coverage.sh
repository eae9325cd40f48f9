#!/usr/bin/env bash
# Coverage of enclave code (docs/guide.md "Testing enclaves: coverage and
# fuzzing"): tests/enclaves/dbg_encl.c built with gcc's freestanding
# coverage flags (mk/cov.mk, build/enclaves/cov_encl.elf), run by
# tests/debug/dbg_host under `sgxemu run --coverage DIR`; gcov's report
# of the .gcda written must give the exact counts of what the host asked
# (three DBG_CMD_COMPUTE calls) and mark what never ran. Then each bad
# input of the issue (43): a non-DEBUG enclave, a .gcov_info pointer out
# of the image, counters that overlap, a gcov version the host's libgcov
# does not write, a thread inside at exit, an output directory that
# cannot be written: one line each, the program's exit status unchanged,
# no file half-written.
# Last line: "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../lib/test_lib.sh"

CLI=$B/sgxemu
HOST=$B/tests/debug/dbg_host
ELF=$B/enclaves/cov_encl.elf
BIN=$B/enclaves/cov_encl.bin
GCNO=$B/enclaves/cov/dbg_encl.gcno
KEY=${SGXEMU_TEST_KEY:-$B/keys/signing_key.pem}
SRC=tests/enclaves/dbg_encl.c
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

if ! gcc -fprofile-info-section -x c -c -o /dev/null /dev/null 2>/dev/null; then
	skp coverage "this gcc has no -fprofile-info-section (gcc 12 or later)"
	finish
fi
for f in "$CLI" "$HOST" "$ELF" "$BIN" "$GCNO" "$KEY"; do
	if [ ! -e "$f" ]; then
		bad coverage "$f not built (make test-build)"
		finish
	fi
done
if ! command -v gcov >/dev/null; then
	skp coverage "no gcov (build-essential)"
	finish
fi
ABS_ELF=$(realpath "$ELF")
# Where the .gcda of the enclave's object goes under DIR: its own path.
OBJ_GCDA=$(realpath "$B")/enclaves/cov/dbg_encl.gcda

# run NAME [ENV...] -- [dbg_host options] [BIN]: DIR is $T/NAME; output
# in $T/NAME.out, stderr in $T/NAME.err, exit status in $T/NAME.rc.
run() {
	local name=$1 bin=$BIN
	shift
	local envs=()
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	if [ -n "${CUSTOM_BIN:-}" ]; then bin=$CUSTOM_BIN; fi
	env "${envs[@]}" SGXEMU_COVERAGE_ELF="$ABS_ELF" timeout 120 \
		"$CLI" run --coverage "$T/$name" "$HOST" "$@" "$KEY" "$bin" \
		> "$T/$name.out" 2> "$T/$name.err"
	echo $? > "$T/$name.rc"
}

# gcov's line for source line N of DIR's report: "COUNT:N".
count() {
	awk -F: -v n="$2" '$2 + 0 == n { gsub(/ /, "", $1); print $1 ":" n; exit }' \
		"$T/$1.gcov"
}
report() {
	local dir=$1 gcda=$2
	mkdir -p "$T/$dir.g"
	cp "$gcda" "$GCNO" "$T/$dir.g/" &&
	gcov -t -o "$T/$dir.g" "$SRC" > "$T/$dir.gcov" 2> "$T/$dir.gcov.err"
}
# No temporary file left anywhere under DIR.
no_temp() { [ -z "$(find "$T/$1" -name '*.gcda.*' 2>/dev/null)" ]; }

# 1. The counts, read by EDBGRD's rule from a DEBUG enclave at exit.
run counts --
if [ "$(cat "$T/counts.rc")" = 0 ] && [ -f "$T/counts$OBJ_GCDA" ]; then
	ok gcda_written_under_dir_by_object_path
else
	bad gcda_written_under_dir_by_object_path "rc=$(cat "$T/counts.rc"): $(cat "$T/counts.err")"
	finish
fi
if report counts "$T/counts$OBJ_GCDA"; then
	ok gcov_reads_the_gcda
else
	bad gcov_reads_the_gcda "$(cat "$T/counts.gcov.err")"
	finish
fi
# dbg_encl.c: encl_square's return (14), encl_compute's body (19, 22),
# encl_dispatch's test and call (45, 46) ran three times; encl_spin's
# loop (31, 32) and encl_fault's store (40) never.
for want in 3:14 3:19 3:22 3:45 3:46 '#####:31' '#####:32' '#####:40' '#####:48'; do
	got=$(count counts "${want#*:}")
	[ "$got" = "$want" ] && ok "count_line_${want#*:}_${want%%:*}" ||
		bad "count_line_${want#*:}" "gcov says '$got', want '$want'"
done
[ -s "$T/counts.err" ] && bad no_stderr_lines "$(cat "$T/counts.err")" || ok no_stderr_lines

# The enclave released before the program exits: written then, once.
SGXEMU_COVERAGE_VERBOSE=1 run release -- --destroy
if [ "$(cat "$T/release.rc")" = 0 ] && grep -q 'enclave destroyed' "$T/release.out" &&
   [ "$(grep -c '1 .gcda file written at release' "$T/release.err")" = 1 ] &&
   ! grep -q 'at exit' "$T/release.err" &&
   cmp -s "$T/release$OBJ_GCDA" "$T/counts$OBJ_GCDA"; then
	ok written_at_release
else
	bad written_at_release "rc=$(cat "$T/release.rc"): $(cat "$T/release.err")"
fi

# 2. The environment variable alone (a program started another way),
# and GCOV_PREFIX_STRIP: the object's path loses its first components.
strip=$(echo "$OBJ_GCDA" | tr -cd / | wc -c)
strip=$((strip - 2))			# what is left: cov/dbg_encl.gcda
SGXEMU_COVERAGE="$T/env" GCOV_PREFIX_STRIP=$strip SGXEMU_COVERAGE_ELF="$ABS_ELF" \
	"$CLI" run "$HOST" "$KEY" "$BIN" > "$T/env.out" 2> "$T/env.err"
rc=$?
if [ $rc = 0 ] && [ -f "$T/env/cov/dbg_encl.gcda" ] &&
   [ "$(find "$T/env" -type f | wc -l)" = 1 ]; then
	ok env_variable_and_prefix_strip
else
	bad env_variable_and_prefix_strip "rc=$rc: $(find "$T/env" -type f) $(cat "$T/env.err")"
fi
cmp -s "$T/env/cov/dbg_encl.gcda" "$T/counts$OBJ_GCDA" &&
	ok same_run_same_gcda || bad same_run_same_gcda "the two .gcda differ"

# The option's other spelling, --coverage=DIR.
SGXEMU_COVERAGE_ELF="$ABS_ELF" "$CLI" run --coverage="$T/eq" "$HOST" "$KEY" "$BIN" > /dev/null 2>&1
cmp -s "$T/eq$OBJ_GCDA" "$T/counts$OBJ_GCDA" && ok option_with_equals ||
	bad option_with_equals "no .gcda under $T/eq"
"$CLI" run --coverage= "$HOST" > /dev/null 2> "$T/empty.err"
rc=$?
[ $rc = 2 ] && grep -q 'needs a directory' "$T/empty.err" && ok option_empty_refused ||
	bad option_empty_refused "rc=$rc: $(cat "$T/empty.err")"

# 3. Not a DEBUG enclave: one line, no file, the program's status.
run nodebug -- --nodebug
if [ "$(cat "$T/nodebug.rc")" = 0 ] && [ ! -e "$T/nodebug" ] &&
   [ "$(grep -c 'not a DEBUG enclave' "$T/nodebug.err")" = 1 ] &&
   [ "$(wc -l < "$T/nodebug.err")" = 1 ]; then
	ok non_debug_enclave_one_line
else
	bad non_debug_enclave_one_line "rc=$(cat "$T/nodebug.rc"): $(cat "$T/nodebug.err")"
fi

# Bad records: the flat image patched (dbg_host measures and signs what
# it loads); the ELF that identifies it is the same, its .text unchanged.
get64() { od -An -t u8 -j $(($2)) -N 8 "$1" | tr -d ' '; }
put64() {
	local v=$3 s=""
	for _ in 1 2 3 4 5 6 7 8; do s="$s$(printf '\\x%02x' $((v & 255)))"; v=$((v >> 8)); done
	printf "$s" | dd of="$1" bs=1 seek=$(($2)) conv=notrunc status=none
}
put32() {
	local v=$3 s=""
	for _ in 1 2 3 4; do s="$s$(printf '\\x%02x' $((v & 255)))"; v=$((v >> 8)); done
	printf "$s" | dd of="$1" bs=1 seek=$(($2)) conv=notrunc status=none
}
sym() { nm "$ELF" | awk -v s="$1" '$3 == s { print "0x" $1 }'; }
SECT=0x$(objdump -h "$ELF" | awk '$2 == ".gcov_info" { print $4 }')
RECORD=$(get64 "$BIN" "$SECT")

# badrun NAME PATTERN: the patched $T/NAME.bin refused in one line.
badrun() {
	local name=$1 pat=$2
	CUSTOM_BIN="$T/$name.bin" run "$name" --
	if [ "$(cat "$T/$name.rc")" = 0 ] && [ "$(wc -l < "$T/$name.err")" = 1 ] &&
	   grep -q "$pat" "$T/$name.err" &&
	   [ -z "$(find "$T/$name" -type f 2>/dev/null)" ]; then
		ok "$name"
	else
		bad "$name" "rc=$(cat "$T/$name.rc"): $(cat "$T/$name.err"); $(find "$T/$name" -type f 2>/dev/null)"
	fi
}

cp "$BIN" "$T/pointer_out_of_image.bin"
put64 "$T/pointer_out_of_image.bin" "$SECT" $((0x7fff00000000))
badrun pointer_out_of_image "leaves the enclave's image"

cp "$BIN" "$T/counters_overlap.bin"
put64 "$T/counters_overlap.bin" $(( $(sym __gcov_.encl_square) + 32 )) $(( $(sym __gcov0.encl_compute) ))
badrun counters_overlap "counters overlap"

cp "$BIN" "$T/unknown_gcov_version.bin"
put32 "$T/unknown_gcov_version.bin" "$RECORD" $((0x41393921))
badrun unknown_gcov_version "gcov version 41393921"

cp "$BIN" "$T/counters_out_of_image.bin"
put64 "$T/counters_out_of_image.bin" $(( $(sym __gcov_.encl_square) + 32 )) $((0x7fff00000000))
badrun counters_out_of_image "leave the enclave's image"

# 4. A thread still inside the enclave at exit: said in one line, the
# counts written as they are then (the spinning thread's keep moving).
run inside -- --threads --leave-inside
if [ "$(cat "$T/inside.rc")" = 0 ] && grep -q 'still inside' "$T/inside.err" &&
   [ "$(wc -l < "$T/inside.err")" = 1 ] && [ -f "$T/inside$OBJ_GCDA" ] &&
   no_temp inside; then
	ok thread_inside_at_exit
else
	bad thread_inside_at_exit "rc=$(cat "$T/inside.rc"): $(cat "$T/inside.err")"
fi

# 5. DIR cannot be written (a file is in its place): one line, nothing
# left behind, the status unchanged.
echo x > "$T/notadir"
SGXEMU_COVERAGE="$T/notadir" SGXEMU_COVERAGE_ELF="$ABS_ELF" \
	"$CLI" run "$HOST" "$KEY" "$BIN" > "$T/nodir.out" 2> "$T/nodir.err"
rc=$?
if [ $rc = 0 ] && [ "$(wc -l < "$T/nodir.err")" = 1 ] &&
   grep -q 'coverage: .*dbg_encl.gcda' "$T/nodir.err" &&
   [ "$(cat "$T/notadir")" = x ]; then
	ok unwritable_dir_one_line
else
	bad unwritable_dir_one_line "rc=$rc: $(cat "$T/nodir.err")"
fi

# 6. The program's own failure status passes through.
"$CLI" run --coverage "$T/fail" "$HOST" "$KEY" /nonexistent > /dev/null 2>&1
[ $? = 1 ] && ok exit_status_unchanged || bad exit_status_unchanged "status $?"

# 7. sgxemu info --enclave says which coverage sections a file carries;
# --debug names the file found for a loaded enclave.
"$CLI" info --enclave "$ELF" > "$T/info.out" 2>&1
grep -q '^gcov: *\.gcov_info, 1 object' "$T/info.out" && grep -q '^libFuzzer: *none' "$T/info.out" &&
	ok info_enclave_gcov_sections || bad info_enclave_gcov_sections "$(cat "$T/info.out")"
"$CLI" info --enclave "$SRC" > "$T/info2.out" 2>&1
[ $? = 1 ] && [ "$(wc -l < "$T/info2.out")" = 1 ] && grep -q 'not an x86-64 ELF' "$T/info2.out" &&
	ok info_enclave_not_elf || bad info_enclave_not_elf "$(cat "$T/info2.out")"
SGXEMU_COVERAGE_ELF="$ABS_ELF" "$CLI" run --debug --coverage "$T/dbg" "$HOST" "$KEY" "$BIN" > /dev/null 2> "$T/dbg.err"
grep -q "coverage: the enclave at 0x[0-9a-f]* is $ABS_ELF: .gcov_info 1 objects" "$T/dbg.err" &&
	ok debug_names_the_elf || bad debug_names_the_elf "$(grep coverage "$T/dbg.err")"

# 8. Without SGXEMU_COVERAGE_ELF the flat image's ELF is nowhere in
# the process: one line says so.
"$CLI" run --coverage "$T/noelf" "$HOST" "$KEY" "$BIN" > "$T/noelf.out" 2> "$T/noelf.err"
rc=$?
[ $rc = 0 ] && grep -q 'SGXEMU_COVERAGE_ELF' "$T/noelf.err" &&
	ok no_elf_one_line || bad no_elf_one_line "rc=$rc: $(cat "$T/noelf.err")"
finish
