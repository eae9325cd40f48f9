#!/usr/bin/env bash
# `sgxemu run` and `sgxemu info` from the outside: programs that never
# touch SGX behave exactly as without the shim (same output, same exit
# status), options and errors of the CLI, the vDSO image for a program that
# only reads the clock, and the man page.
# Last line: "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../lib/test_lib.sh"

CLI=$B/sgxemu
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

if [ ! -x "$CLI" ] || [ ! -f "$B/libsgxemu.so" ]; then
	bad shim "$CLI or $B/libsgxemu.so not built"
	echo "$pass passed, $fail failed, $skip skipped"
	exit 1
fi

# A program that never touches SGX: identical output and status.
native=$(ls -la /usr/bin 2>&1; echo "rc=$?")
shimmed=$("$CLI" run ls -la /usr/bin 2>&1; echo "rc=$?")
[ "$native" = "$shimmed" ] && ok ls_unchanged || bad ls_unchanged "output differs"

native=$(sh -c 'echo hello; exit 3' 2>&1; echo "rc=$?")
shimmed=$("$CLI" run sh -c 'echo hello; exit 3' 2>&1; echo "rc=$?")
[ "$native" = "$shimmed" ] && ok exit_status_passed || bad exit_status_passed "$shimmed"

# The shim is really there, and in its children, though the program's
# environment does not show it (tests/integration/test_early.sh has more).
pre=$("$CLI" run sh -c 'echo "[$LD_PRELOAD]"; grep -c "/libsgxemu.so" /proc/self/maps')
case "$pre" in "[]"*[1-9]*) ok preloaded ;; *) bad preloaded "'$pre'" ;; esac

# Device paths stat as character devices under the shim only.
if "$CLI" run test -c /dev/sgx_enclave && "$CLI" run test -c /dev/sgx/provision; then
	ok device_nodes
else
	bad device_nodes "test -c failed under the shim"
fi

# Locked launch control: Linux has no SGX devices then (no FLC).
if SGXEMU_LAUNCH_CONTROL=locked "$CLI" run test -e /dev/sgx_enclave ||
   SGXEMU_LAUNCH_CONTROL=locked "$CLI" run test -e /dev/sgx/provision; then
	bad no_devices_when_locked "a device exists"
else
	ok no_devices_when_locked
fi

# A C program using files, pipes, mmap, fork, signals and the clock.
cat > "$T/plain.c" <<'PROG'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
static volatile sig_atomic_t got;
static void h(int s) { got = s; }
int main(void)
{
	struct timespec ts;
	struct stat st;
	int p[2], fd;
	char buf[16] = "";
	char *m;
	signal(SIGUSR1, h);
	raise(SIGUSR1);
	printf("signal %d\n", got);
	if (clock_gettime(CLOCK_MONOTONIC, &ts) || ts.tv_sec <= 0) return 1;
	printf("clock ok\n");
	m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	strcpy(m, "mapped");
	mprotect(m, 4096, PROT_READ);
	printf("%s\n", m);
	munmap(m, 8192);
	if (pipe(p)) return 1;
	if (fork() == 0) { write(p[1], "child", 6); _exit(7); }
	read(p[0], buf, 6);
	int status; wait(&status);
	printf("%s %d\n", buf, WEXITSTATUS(status));
	fd = open("/etc/hostname", O_RDONLY);
	int fd2 = dup(fd);
	printf("fstat %d\n", fstat(fd2, &st) == 0 && S_ISREG(st.st_mode));
	close(fd); close(fd2);
	printf("open missing %d\n", open("/dev/sgx_nope", O_RDONLY) < 0);
	return 0;
}
PROG
if cc -O1 -o "$T/plain" "$T/plain.c" 2>"$T/cc.err"; then
	native=$("$T/plain" 2>&1; echo "rc=$?")
	shimmed=$("$CLI" run "$T/plain" 2>&1; echo "rc=$?")
	[ "$native" = "$shimmed" ] && ok c_program_unchanged || bad c_program_unchanged "native: $native / shim: $shimmed"
else
	bad c_program_unchanged "cannot compile: $(cat "$T/cc.err")"
fi

# A static program cannot be preloaded: a warning, and it still runs.
printf 'int main(void) { return 5; }\n' > "$T/static.c"
if cc -static -o "$T/static" "$T/static.c" 2>/dev/null; then
	err=$("$CLI" run "$T/static" 2>&1 >/dev/null); rc=$?
	if [ $rc -eq 5 ] && echo "$err" | grep -q 'statically linked'; then
		ok static_program_warned
	else
		bad static_program_warned "rc $rc, stderr '$err'"
	fi
else
	skp static_program_warned "no static libc to link with"
fi

# The host programs again, with guard mode on and with an SGX1 platform.
for v in SGXEMU_GUARD=1 SGXEMU_SGX2=0; do
	for t in "$B/tests/integration/test_shim_mainline" "$B/tests/integration/test_shim_seed" "$B/tests/integration/test_sgx2"; do
		[ -x "$t" ] || { skp "$(basename "$t")_$v" "not built"; continue; }
		line=$(env "$v" B="$B" "$t" 2>&1 | tail -n 1)
		case "$line" in
		*" 0 failed"*) ok "$(basename "$t")_$v" ;;
		*) bad "$(basename "$t")_$v" "$line" ;;
		esac
	done
done

# One test program again with one more environment setting: rerun NAME
# VAR=VALUE PROGRAM.
rerun() {
	if [ -x "$3" ]; then
		line=$(env "$2" B="$B" "$3" 2>&1 | tail -n 1)
		case "$line" in
		*" 0 failed"*) ok "$1" ;;
		*) bad "$1" "$line" ;;
		esac
	else
		skp "$1" "not built"
	fi
}

# CPUID in enclave mode as hardware's #UD (meaningful under CPUID faulting;
# elsewhere the test checks the native answer again).
rerun test_shim_mainline_cpuid_ud SGXEMU_CPUID_ENCLAVE=ud "$B/tests/integration/test_shim_mainline"

# The driver's host-fault hook on an SGX1 platform: SIGBUS where no page is.
rerun test_host_access_sgx1 SGXEMU_SGX2=0 "$B/tests/integration/test_host_access"

# SGX2 with an EPC (512 KiB) smaller than the heap the test grows (1 MiB):
# EAUGed pages are reclaimed and reloaded like any other.
rerun test_sgx2_small_epc SGXEMU_EPC_SIZE=524288 "$B/tests/integration/test_sgx2"

# An installed layout (PREFIX/bin/sgxemu, PREFIX/lib/sgxemu/libsgxemu.so).
mkdir -p "$T/prefix/bin" "$T/prefix/lib/sgxemu"
cp "$CLI" "$T/prefix/bin/sgxemu" && cp "$B/libsgxemu.so" "$B/libsgxemu-audit.so" "$T/prefix/lib/sgxemu/"
pre=$("$T/prefix/bin/sgxemu" run sh -c 'grep -o "/prefix/lib/sgxemu/libsgxemu.so" /proc/self/maps | head -n 1')
case "$pre" in *"/prefix/lib/sgxemu/libsgxemu.so"*) ok installed_layout ;;
*) bad installed_layout "maps: '$pre'" ;; esac
rm -f "$T/prefix/lib/sgxemu/libsgxemu.so"
"$T/prefix/bin/sgxemu" run true 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'libsgxemu.so not found' "$T/err" && ok shim_missing ||
	bad shim_missing "rc $rc: $(cat "$T/err")"

# CLI errors: usage 2, missing program 127.
"$CLI" run >/dev/null 2>&1; [ $? -eq 2 ] && ok run_no_program || bad run_no_program "exit status"
"$CLI" run --bogus true >/dev/null 2>&1; [ $? -eq 2 ] && ok run_bad_option || bad run_bad_option "exit status"
"$CLI" run --epc-size 12x true >/dev/null 2>&1; [ $? -eq 2 ] && ok run_bad_epc_size || bad run_bad_epc_size "exit status"
"$CLI" run /nonexistent/prog >/dev/null 2>&1; [ $? -eq 127 ] && ok run_missing_program || bad run_missing_program "exit status"
"$CLI" run --epc-size 64M --guard true && ok run_options || bad run_options "exit status"
"$CLI" run --help | grep -q 'sgxemu run' && ok run_help || bad run_help "no usage"

# --debug prints a refusal the program repeats once, then its count (the
# Intel SDK repeats its EDMM probe at every ECALL): 50 RESTRICT_PERMISSIONS
# on an enclave that is not initialized. A C program of one process: the
# python3 this used to run is a chain of some 40 shell processes where
# pyenv provides it, and what it printed on a failure did not say which.
cat > "$T/restrict50.c" <<'EOF'
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
int main(void)
{
	char arg[40] = { 0 };
	int fd = open("/dev/sgx_enclave", O_RDWR);

	if (fd < 0) {
		perror("open /dev/sgx_enclave");
		return 1;
	}
	for (int i = 0; i < 50; i++)
		ioctl(fd, 0xC028A405UL, arg);
	return 0;
}
EOF
if cc -o "$T/restrict50" "$T/restrict50.c" 2> "$T/restrict50.err"; then
	out=$("$CLI" run --debug "$T/restrict50" 2>&1 >/dev/null)
	rc=$?
	n=$(echo "$out" | grep -c 'RESTRICT_PERMISSIONS')
	if [ "$rc" -eq 0 ] && [ "$n" -eq 1 ] &&
	   echo "$out" | grep -q 'the line above repeated 49 more times'; then
		ok debug_repeats_counted
	else
		bad debug_repeats_counted "rc $rc, $n lines: $(echo "$out" |
			grep -v -e ': cpuid: ' -e ': rawsys: ' | tail -n 5)"
	fi
else
	bad debug_repeats_counted "cc failed: $(head -n 3 "$T/restrict50.err")"
fi

# info.
if out=$("$CLI" info 2>&1); then
	for w in SGX1 MISCSELECT "EPC section 0" "launch control" engine; do
		echo "$out" | grep -q "$w" || { bad info "no '$w' in: $out"; break; }
	done
	echo "$out" | grep -q "engine" && ok info
	SGXEMU_SGX2=0 "$CLI" info | grep -q 'SGX2' && bad info_sgx1 "SGX2 listed" || ok info_sgx1
	SGXEMU_EPC_SIZE=16M "$CLI" info | grep -q 'EPC total: *16.0 MiB' && ok info_epc_size ||
		bad info_epc_size "$(SGXEMU_EPC_SIZE=16M "$CLI" info | grep 'EPC total')"
	"$CLI" info extra >/dev/null 2>&1; [ $? -eq 2 ] && ok info_usage || bad info_usage "exit status"
else
	bad info "exit status: $out"
fi

# The man page renders.
if command -v man >/dev/null 2>&1 && [ -f docs/sgxemu.1 ]; then
	man -l docs/sgxemu.1 2>/dev/null | grep -q 'sgxemu run' && ok man_page || bad man_page "does not render"
elif [ -f docs/sgxemu.1 ]; then
	grep -q '^\.TH SGXEMU 1' docs/sgxemu.1 && ok man_page || bad man_page "no .TH"
else
	bad man_page "docs/sgxemu.1 missing"
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
