#!/usr/bin/env bash
# gdb on an unmodified SGX program under `sgxemu gdb` (docs/guide.md
# "Debugging enclaves"), in batch mode, asserting on what gdb prints:
# a breakpoint in a DEBUG enclave's code (an R-X page), bt, registers,
# next/stepi/finish, a watchpoint on enclave data (where a plain program's
# hardware watchpoint stops on this host), a second thread in the
# enclave, a non-DEBUG enclave refused, a real fault still stopping gdb,
# and the engine's own traps never stopping it. The program is
# tests/debug/dbg_host.c with tests/enclaves/dbg_encl.c.
# Last line: "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../lib/test_lib.sh"

CLI=$B/sgxemu
HOST=$B/tests/debug/dbg_host
ELF=$B/enclaves/dbg_encl.elf
BIN=$B/enclaves/dbg_encl.bin
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# The command file and the command, whatever else is there.
if [ -f "$B/sgxemu.gdb" ] && grep -q '^handle SIGILL nostop noprint pass' "$B/sgxemu.gdb" &&
   grep -q '^handle SIG[0-9]* nostop noprint pass' "$B/sgxemu.gdb"; then
	ok gdb_script_built
else
	bad gdb_script_built "$B/sgxemu.gdb missing or without its handle lines"
fi
"$CLI" gdb --help | grep -q 'usage: sgxemu gdb' && ok gdb_help || bad gdb_help "no usage"
"$CLI" gdb >/dev/null 2>&1
[ $? -eq 2 ] && ok gdb_no_program_usage || bad gdb_no_program_usage "exit status not 2"
# The debugger's command line: the command file first, the shim for the
# program only, gdb's own options in order, then the program.
line=$(SGXEMU_GDB="echo" "$CLI" gdb --guard -ex one -batch -x two /bin/true a 2>&1)
case "$line" in
"-x $(realpath "$B")/sgxemu.gdb -iex set exec-wrapper env 'LD_PRELOAD=$(realpath "$B")/libsgxemu.so' -ex one -batch -x two --args /bin/true a")
	ok gdb_command_line ;;
*)	bad gdb_command_line "'$line'" ;;
esac
SGXEMU_GDB=/nonexistent/gdb "$CLI" gdb /bin/true >/dev/null 2>"$T/err"
rc=$?
{ [ $rc -eq 127 ] && grep -q 'cannot run /nonexistent/gdb' "$T/err"; } &&
	ok gdb_missing_debugger || bad gdb_missing_debugger "rc=$rc: $(cat "$T/err")"

if ! command -v gdb >/dev/null; then
	skp gdb_sessions "gdb is not installed (scripts/deps.sh test installs it)"
	finish
fi
for f in "$CLI" "$HOST" "$ELF" "$BIN" "$B/libsgxemu_ptrace.so"; do
	if [ ! -e "$f" ]; then
		bad gdb_sessions "$f not built"
		finish
	fi
done
# make asan: gdb itself is not ASan-linked, so it cannot load the
# instrumented libsgxemu_ptrace.so (its interceptors jump to 0); the plain
# build's make test runs these sessions.
if ldd "$B/libsgxemu_ptrace.so" 2>/dev/null | grep -q libasan; then
	skp gdb_sessions "sanitizer build: gdb cannot load an ASan-instrumented libsgxemu_ptrace.so"
	finish
fi
if ! openssl genrsa -3 -out "$T/key.pem" 3072 2>/dev/null; then
	skp gdb_sessions "openssl cannot make a signing key"
	finish
fi

# gdb -batch on dbg_host with the commands on stdin-less -ex lines; the
# symbols go in at the enclave's base, as a runtime's debugger support does.
session() {	# NAME HOST-OPTIONS GDB-COMMAND...
	local name=$1 opts=$2
	shift 2
	local args=(-ex 'break dbg_enclave_loaded' -ex run
		    -ex "add-symbol-file $ELF -o \$rdi")
	for c in "$@"; do args+=(-ex "$c"); done
	# shellcheck disable=SC2086
	timeout 300 "$CLI" gdb ${RUNOPTS:-} -batch "${args[@]}" "$HOST" $opts "$T/key.pem" "$BIN" \
		> "$T/$name.out" 2>&1
	echo "rc=$?" >> "$T/$name.out"
}
has() {		# NAME TEST-NAME EXTENDED-REGEX
	if grep -Eq -- "$3" "$T/$1.out"; then
		ok "$2"
	else
		bad "$2" "no /$3/ in gdb's output:"
		sed 's/^/    | /' "$T/$1.out" | tail -40
	fi
}

# What the host lets gdb do, seen with a plain program under plain gdb
# (a breakpoint, then a watchpoint on a global), run once:
#  - run a program at all: a host that refuses ptrace (Yama's
#    ptrace_scope 3, a container's seccomp profile) stops every session;
#    SGXEMU_TEST_NO_PTRACE=1 takes that path;
#  - hardware watchpoints: some VM hosts take gdb's debug register writes
#    but never raise the debug exception, so `watch` stops not even a
#    plain program; SGXEMU_TEST_NO_HW_WATCH=1 takes that path, which the
#    check after the first session uses on every host.
plain_gdb_probe() {
	if [ "${SGXEMU_TEST_NO_PTRACE:-0}" = 1 ]; then
		gdb_why="SGXEMU_TEST_NO_PTRACE=1 says this host refuses ptrace"
		return 1
	fi
	cat > "$T/watch.c" <<'EOF'
volatile int counter;
__attribute__((noinline)) int bump(int x) { counter = counter + 1; return x + 3; }
int main(void) { return bump(2) == 5 ? 0 : 1; }
EOF
	if ! cc -O0 -g -o "$T/watch" "$T/watch.c" 2> "$T/watch.err"; then
		gdb_why="cannot build the probe program: $(head -n 1 "$T/watch.err")"
		return 1
	fi
	timeout 60 gdb -nx -batch -ex 'break bump' -ex run -ex 'watch counter' \
		-ex continue "$T/watch" > "$T/watch.out" 2>&1
	if ! grep -q '^Breakpoint 1, bump' "$T/watch.out"; then
		gdb_why="gdb cannot run a plain program here: $(grep -m 1 -iE 'ptrace|permit|cannot|error' "$T/watch.out")"
		return 1
	fi
	return 0
}
hw_watch_probe() {
	if [ "${SGXEMU_TEST_NO_HW_WATCH:-0}" = 1 ]; then
		hw_watch_why="SGXEMU_TEST_NO_HW_WATCH=1 says this host has no hardware watchpoints"
		return 1
	fi
	if ! grep -A1 'Old value = 0' "$T/watch.out" | grep -q 'New value = 1'; then
		hw_watch_why="a hardware watchpoint does not stop a plain program on this host (gdb's watch on a global of a non-enclave program never triggers)"
		return 1
	fi
	return 0
}
if ! plain_gdb_probe; then
	skp gdb_sessions "$gdb_why"
	finish
fi
hw_watch=1
hw_watch_why=
watch_cmds=('watch encl_counter' continue)
if ! hw_watch_probe; then
	hw_watch=0
	watch_cmds=()
fi

# 1. A DEBUG enclave: break, bt, registers, next, stepi, watch, finish
# (finish from where stepi left, where the host has no watchpoints).
session debug "" \
	'break encl_compute' continue bt 'info registers rip' 'p x' \
	next next 'p y' 'p/x $pc' stepi 'p/x $pc' "${watch_cmds[@]}" \
	finish delete continue
has debug bp_in_enclave_code 'hit Breakpoint [0-9]+, encl_compute \(x=2\) at .*dbg_encl\.c:19'
has debug bt_enclave_frames '^#1 .* in encl_dispatch \(cmd=1, a=0x[0-9a-f]+\) at .*dbg_encl\.c'
base=$(sed -nE 's/.*with all sections offset by (0x[0-9a-f]+).*/\1/p' "$T/debug.out" | head -n 1)
rip=$(sed -nE 's/^rip +(0x[0-9a-f]+) .*/\1/p' "$T/debug.out" | head -n 1)
if [ -n "$base" ] && [ -n "$rip" ] &&
   [ $((rip - base)) -ge $((0x4000)) ] && [ $((rip - base)) -lt $((0x10000)) ]; then
	ok registers_are_the_enclaves
else
	bad registers_are_the_enclaves "rip '$rip' not in the enclave's code (base '$base')"
fi
has debug print_argument '^\$1 = 2$'
has debug next_lands_on_next_line '^21[[:space:]]+y = y \+ 1;'
has debug next_again '^22[[:space:]]+encl_counter = encl_counter \+ 1;'
has debug print_local '^\$2 = 5$'
pc1=$(sed -nE 's/^\$3 = (0x[0-9a-f]+)$/\1/p' "$T/debug.out")
pc2=$(sed -nE 's/^\$4 = (0x[0-9a-f]+)$/\1/p' "$T/debug.out")
if [ -n "$pc1" ] && [ -n "$pc2" ] && [ $((pc2 - pc1)) -gt 0 ] && [ $((pc2 - pc1)) -le 15 ]; then
	ok stepi_one_instruction
else
	bad stepi_one_instruction "pc '$pc1' -> '$pc2'"
fi
if [ "$hw_watch" = 1 ]; then
	has debug watch_enclave_data 'Hardware watchpoint [0-9]+: encl_counter'
	if grep -A1 'Old value = 0' "$T/debug.out" | grep -q 'New value = 1'; then
		ok watch_triggers
	else
		bad watch_triggers "no 'Old value = 0 / New value = 1'"
	fi
else
	skp watch_enclave_data "$hw_watch_why"
	skp watch_triggers "$hw_watch_why"
fi
has debug finish_returns 'Value returned is \$[0-9]+ = 5'
has debug program_unharmed '^dbg_host: ok$'
has debug exits_normally 'exited normally'
if grep -Eq 'received signal SIG(ILL|SEGV|SYS|BUS)|SIG63' "$T/debug.out"; then
	bad engine_signals_silent "an engine signal stopped gdb"
else
	ok engine_signals_silent
fi
# sgxemu.gdb's breakpoint on sgxemu_debug_signal waits for libsgxemu.so
# without gdb's "Function ... not defined" / "pending" lines at start.
if grep -Eq 'Function "sgxemu_debug_[a-z]*" not defined|\(sgxemu_debug_[a-z]*\) pending' "$T/debug.out"; then
	bad gdb_start_quiet "$(grep -E 'not defined|pending' "$T/debug.out" | head -n 2 | tr '\n' '|')"
else
	ok gdb_start_quiet
fi

# 1a. The path of a host without hardware watchpoints, taken here too
# where they work: the override turns the probe's answer, and the session
# without the watch still finishes out of encl_compute with its value.
if [ "$hw_watch" = 1 ]; then
	if (SGXEMU_TEST_NO_HW_WATCH=1 hw_watch_probe); then
		bad hw_watch_override "SGXEMU_TEST_NO_HW_WATCH=1 did not turn the probe"
	else
		ok hw_watch_override
	fi
	if (SGXEMU_TEST_NO_PTRACE=1 plain_gdb_probe); then
		bad ptrace_override "SGXEMU_TEST_NO_PTRACE=1 did not turn the probe"
	else
		ok ptrace_override
	fi
	session nowatch "" 'break encl_compute' continue next next stepi \
		finish delete continue
	has nowatch finish_returns_without_watch 'Value returned is \$[0-9]+ = 5'
	has nowatch exits_normally_without_watch 'exited normally'
fi

# 2. A second thread in the enclave while breakpoints hit on both.
session threads --threads 'break encl_compute' continue continue continue \
	continue delete continue
n=$(grep -Ec 'hit Breakpoint [0-9]+, encl_compute' "$T/threads.out")
[ "$n" -ge 3 ] && ok breakpoints_on_two_threads || bad breakpoints_on_two_threads "$n hits"
has threads engine_undisturbed_by_threads '^dbg_host: ok$'
has threads threads_exit_normally 'exited normally'

# 3. A non-DEBUG enclave: the debugger cannot read it nor set a breakpoint
# in it (the kernel's hook refuses it on hardware), and the program runs on.
# (gdb disables a breakpoint it cannot write into a file added with
# add-symbol-file without a word, as into a shared library.)
session nodebug --nodebug 'x/2gx $rdi + 0x4000' 'break encl_compute' continue
has nodebug nodebug_unreadable 'Cannot access memory at address 0x[0-9a-f]+4000'
if grep -q 'hit Breakpoint [0-9]*, encl_compute' "$T/nodebug.out"; then
	bad nodebug_no_breakpoint "a breakpoint was written into a non-DEBUG enclave"
else
	ok nodebug_no_breakpoint
fi
has nodebug nodebug_program_runs '^dbg_host: ok$'

# 4. EPC paging: three more copies of the enclave in a 512 KiB EPC evict
# the first one's pages; a breakpoint goes into its evicted code page
# (sealed again as ELDU expects) and is hit once the page is back.
RUNOPTS="--epc-size 512K" session evicted "--copies 4" \
	'break encl_compute' continue 'p x' delete continue
has evicted bp_in_evicted_page 'hit Breakpoint [0-9]+, encl_compute \(x=2\)'
has evicted evicted_program_unharmed '^dbg_host: ok$'

# 4a. An exception in a DEBUG enclave: gdb stops at the faulting enclave
# instruction with the enclave's registers (as on hardware, where the
# kernel's signal at the AEP stops it), then the program gets it as
# always (the vDSO reports #PF) and runs on.
session fault --fault continue bt continue
has fault enclave_fault_stops_at_instruction 'hit Catchpoint [0-9]+ \(signal SIGSEGV\), 0x[0-9a-f]+ in encl_fault \(p=0x0\) at .*dbg_encl\.c'
has fault enclave_fault_bt '^#1 .* in encl_dispatch \(cmd=3'
has fault enclave_fault_reported_after '^dbg_host: enclave exception 14$'
has fault enclave_fault_program_runs_on '^dbg_host: ok$'

# 4b. Detached in the middle of a step in the enclave: gdb takes its
# breakpoints out, and the program and the emulator run on to the end.
session detach "" 'break encl_compute' continue stepi stepi detach
for _ in $(seq 1 100); do
	grep -q '^dbg_host: ok$' "$T/detach.out" && break
	sleep 0.1
done
has detach detach_mid_step_program_runs_on '^dbg_host: ok$'

# 5. A real fault of the program still stops gdb, at the faulting
# instruction (the emulator's handlers pass it on to its default action),
# and a program that never used SGX stops as without the emulator.
timeout 300 "$CLI" gdb -batch -ex run -ex bt -ex continue "$HOST" --crash \
	"$T/key.pem" "$BIN" > "$T/crash.out" 2>&1
has crash crash_stops_at_fault 'hit Catchpoint [0-9]+ \(signal SIGSEGV\), host_crash \(p=0x0\)'
has crash crash_bt '^#0 .*host_crash \(p=0x0\)'
if grep -q 'sgxemu_debug_signal (' "$T/crash.out"; then
	bad crash_no_hook_stop "stopped in the emulator for a fault no handler takes"
else
	ok crash_no_hook_stop
fi
timeout 300 "$CLI" gdb -batch -ex run sh -c 'kill -SEGV $$' > "$T/plain.out" 2>&1
has plain plain_crash_stops 'Catchpoint [0-9]+ \(signal SIGSEGV\)'

# 6. The SDK's sgx-gdb on its SampleEnclave (a DEBUG enclave), as a user
# would start it: `sgx-gdb -x sgxemu.gdb --args sgxemu run ./app`. It
# preloads its own libsgx_ptrace.so; sgxemu.gdb loads ours into gdb. It
# finds the enclave through the urts's debug list and loads its symbols.
SDK_SETUP=${SGXEMU_SHARED:-../shared}/clients/intel-sdk/setup.sh
if [ ! -f "$SDK_SETUP" ]; then
	skp sgx_gdb "no ../shared/clients/intel-sdk"
	finish
fi
ABS_B=$(realpath "$B")
D=$ABS_B/sdk-gdb
if [ ! -x "$D/samples/SampleEnclave/app" ] &&
   ! bash "$SDK_SETUP" "$D" SampleEnclave > "$T/sdk-setup.out" 2>&1; then
	bad sgx_gdb_setup "$(tail -n 5 "$T/sdk-setup.out")"
	finish
fi
(cd "$D/samples/SampleEnclave" && echo x | LD_LIBRARY_PATH="$D/psw/lib" \
	timeout 300 "$D/sgxsdk/bin/sgx-gdb" -batch -x "$ABS_B/sgxemu.gdb" \
	-ex 'set breakpoint pending on' -ex 'break Arrays.cpp:64' -ex run \
	-ex 'p arr[1]' -ex next -ex 'p i' -ex next -ex next -ex 'p arr[0]' \
	-ex 'info breakpoints 1' -ex delete -ex continue --args "$ABS_B/sgxemu" run ./app) \
	> "$T/sgxgdb.out" 2>&1
has sgxgdb sgx_gdb_loads_symbols "add-symbol-file '.*enclave.signed.so'"
has sgxgdb sgx_gdb_bp_in_enclave 'hit Breakpoint [0-9.]+, ecall_array_in \(arr=0x[0-9a-f]+\) at Enclave/Edger8rSyntax/Arrays.cpp:64'
has sgxgdb sgx_gdb_print_enclave_data '^\$1 = 1$'
has sgxgdb sgx_gdb_next_line '^65[[:space:]]+assert\(arr\[i\] == i\);'
has sgxgdb sgx_gdb_print_local '^\$2 = 0$'
has sgxgdb sgx_gdb_enclave_write_seen '^\$3 = 3$'
has sgxgdb sgx_gdb_sample_completes 'Info: SampleEnclave successfully returned.'
# sgxemu.gdb's breakpoints survive the exec of sgxemu run: breakpoint 1
# found again in the program's libsgxemu.so, enabled, and not a word from
# gdb about the functions it could not find in the new program before that.
has sgxgdb sgx_gdb_signal_bp_after_exec '^1 +breakpoint +keep +y +0x[0-9a-f]+ in sgxemu_debug_signal at '
if grep -Eq 'Error in re-setting breakpoint|Function "sgxemu_debug_[a-z]*" not defined' "$T/sgxgdb.out"; then
	bad sgx_gdb_exec_quiet "$(grep -E 're-setting|not defined' "$T/sgxgdb.out" | head -n 3 | tr '\n' '|')"
else
	ok sgx_gdb_exec_quiet
fi

# 7. sgx-gdb and an enclave exception: the SDK test enclave's ud2, ud2 and
# divide error (tests/sdk, handled by sgx_register_exception_handler).
# gdb stops at the faulting enclave instruction with the enclave's stack,
# as with a DEBUG enclave on hardware; continuing hands each to the SDK.
if ! bash "$(dirname "$0")/../sdk/build.sh" "$D" "$D/own" > "$T/sdk-own.out" 2>&1; then
	bad sgx_gdb_exception_setup "$(tail -n 5 "$T/sdk-own.out")"
	finish
fi
(cd "$D/own" && LD_LIBRARY_PATH="$D/psw/lib" \
	timeout 300 "$D/sgxsdk/bin/sgx-gdb" -batch -x "$ABS_B/sgxemu.gdb" \
	-ex run -ex bt -ex 'x/i $pc' -ex continue -ex continue -ex continue \
	--args "$ABS_B/sgxemu" run ./app encl.signed.so exceptions) \
	> "$T/sgxgdb-exc.out" 2>&1
has sgxgdb-exc sgx_gdb_exception_stops_in_enclave '\(signal SIGILL\), 0x[0-9a-f]+ in ecall_exceptions \(\)'
has sgxgdb-exc sgx_gdb_exception_enclave_stack '^#[0-9]+ .* in enclave_entry \(\)'
has sgxgdb-exc sgx_gdb_exception_faulting_instruction '^=> 0x[0-9a-f]+ <ecall_exceptions\+[0-9]+>:[[:space:]]+ud2'
has sgxgdb-exc sgx_gdb_exception_divide_error 'received signal SIGFPE'
has sgxgdb-exc sgx_gdb_exception_handled_after 'ok exceptions_handled_in_enclave'
finish
