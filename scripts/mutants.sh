#!/usr/bin/env bash
# make mutants: does the suite fail when a rule breaks?
#
# Each line of tests/mutants/mutants.txt is one single-line mutation of a
# security or fidelity rule (a sed expression on one file) and the tests
# that should notice. For each: the file of a scratch copy of the tree
# (build/mutants/tree, never the working tree) is replaced by its mutated
# self, the copy rebuilt, and the tests run until one fails:
#   KILLED    a test failed (or hung past MUTANT_TEST_TIMEOUT seconds);
#   SURVIVED  every test passed: a rule the suite does not hold;
#   INVALID   the mutant does not compile (not counted either way);
#   STALE     the expression no longer changes exactly one line (fix the
#             list; not counted).
# Kill rate = killed / (killed + survived). The whole run stops starting
# new mutants after MUTANTS_BUDGET seconds (default 1080, so that it ends
# within 20 minutes on 2 cores); the rest are NOT RUN.
#
#   scripts/mutants.sh [ID...]       only the mutants named
#   MUTANTS_LIST=file                another list
#
# Exit status: 0 when no mutant survived and none was stale, 1 otherwise.
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
LIST=${MUTANTS_LIST:-tests/mutants/mutants.txt}
W=${MUTANTS_DIR:-build/mutants}
TREE=$W/tree
B=build
TIMEOUT=${MUTANT_TEST_TIMEOUT:-180}
BUDGET=${MUTANTS_BUDGET:-1080}
export SGXEMU_SHARED=${SGXEMU_SHARED:-$(cd .. && pwd)/shared}
NICE="nice -n 10"
start=$(date +%s)

[ -f "$LIST" ] || { echo "mutants: no list $LIST" >&2; exit 2; }
mkdir -p "$W"

# The scratch copy: the working files as they are now (committed or not),
# with the current build's objects (tar keeps their times) so that a
# mutant rebuilds one file.
echo "== scratch copy in $TREE"
rm -rf "$TREE"
mkdir -p "$TREE/build"
tar -C . --exclude=./build --exclude='./build-*' --exclude=./.git -cf - . |
	tar -C "$TREE" -xf - || exit 2
if [ -d build ]; then
	tar -C build --exclude=./mutants --exclude=./gramine -cf - . |
		tar -C "$TREE/build" -xf - || exit 2
fi

# Every test the list names, and what they need to run.
all_tests=$(grep -v '^\s*#' "$LIST" | awk 'NF >= 4 { print $3 }' |
	    tr ',' '\n' | sort -u)
targets="all"
for t in $all_tests; do
	case $t in
	*.sh) ;;
	*) targets="$targets $B/tests/$t" ;;
	esac
done
encls="$B/enclaves/test_encl.bin $B/enclaves/compute_encl.bin \
	$B/enclaves/keys_encl.bin $B/enclaves/paging_encl.bin"
targets="$targets $encls"

# Build the library, the shim, the CLI and the test programs in @1
# (comma-separated; all the list's when empty).
build() {
	local t want="all $encls" list=${1:-}

	for t in ${list//,/ }; do
		case $t in *.sh) ;; *) want="$want $B/tests/$t" ;; esac
	done
	[ -n "$list" ] || want=$targets
	$NICE make -C "$TREE" -j2 -s B=$B \
		SEED_DIR="$ROOT/../shared/seed-tree/tools/testing/selftests/x86/sgx" \
		$want >"$W/build.log" 2>&1
}

# Run @1 (a test program under $B/tests or a script path) in the copy.
run_test() {
	local t=$1 out rc
	out=$W/test.log
	case $t in
	*.sh) (cd "$TREE" && B=$B timeout "$TIMEOUT" $NICE "$t") >"$out" 2>&1 ;;
	*) (cd "$TREE" && B=$B timeout "$TIMEOUT" $NICE "$B/tests/$t") >"$out" 2>&1 ;;
	esac
	rc=$?
	[ $rc -eq 0 ] || return 1
	# A program that says it failed counts even when it exits 0.
	! grep -qE '^[0-9]+ passed, [1-9][0-9]* failed' "$out"
}

echo "== baseline build and tests"
if ! build; then
	echo "mutants: the unmutated tree does not build:" >&2
	tail -20 "$W/build.log" >&2
	exit 2
fi
for t in $all_tests; do
	if ! run_test "$t"; then
		echo "mutants: $t fails without any mutant; fix that first:" >&2
		tail -20 "$W/test.log" >&2
		exit 2
	fi
done

killed=0 survived=0 invalid=0 stale=0 notrun=0
survivors=""
while read -r id file tests expr; do
	case $id in ''|'#'*) continue ;; esac
	if [ $# -gt 0 ]; then
		want=0
		for a in "$@"; do [ "$a" = "$id" ] && want=1; done
		[ $want -eq 1 ] || continue
	fi
	if [ $(( $(date +%s) - start )) -ge "$BUDGET" ]; then
		echo "NOT RUN  $id (time budget)"
		notrun=$((notrun + 1))
		continue
	fi
	if [ -z "$expr" ] || [ ! -f "$file" ]; then
		echo "STALE    $id: no such file or no expression"
		stale=$((stale + 1))
		continue
	fi
	sed -e "$expr" "$file" >"$TREE/$file.mut" 2>"$W/sed.log"
	changed=$(diff "$file" "$TREE/$file.mut" | grep -c '^<')
	added=$(diff "$file" "$TREE/$file.mut" | grep -c '^>')
	if [ "$changed" -ne 1 ] || [ "$added" -gt 1 ]; then
		echo "STALE    $id: the expression changes $changed lines of $file"
		rm -f "$TREE/$file.mut"
		stale=$((stale + 1))
		continue
	fi
	mv "$TREE/$file.mut" "$TREE/$file"
	t0=$(date +%s)
	if ! build "$tests"; then
		echo "INVALID  $id (does not compile)"
		invalid=$((invalid + 1))
	else
		by=""
		for t in ${tests//,/ }; do
			if ! run_test "$t"; then
				by=$t
				break
			fi
		done
		if [ -n "$by" ]; then
			echo "KILLED   $id by $by ($(( $(date +%s) - t0 ))s)"
			killed=$((killed + 1))
		else
			echo "SURVIVED $id ($file: $expr)"
			survived=$((survived + 1))
			survivors="$survivors $id"
		fi
	fi
	cp -p "$file" "$TREE/$file"
	touch "$TREE/$file"
done < <(grep -v '^\s*#' "$LIST")

# Leave the copy built as the tree is.
build || true
total=$((killed + survived))
echo "== $killed killed, $survived survived, $invalid invalid, $stale stale, $notrun not run ($(( $(date +%s) - start ))s)"
if [ $total -gt 0 ]; then
	echo "kill rate: $killed/$total = $(( 100 * killed / total ))%"
fi
[ -z "$survivors" ] || echo "survivors:$survivors"
[ $survived -eq 0 ] && [ $stale -eq 0 ]
