#!/usr/bin/env bash
# What a program sees before its own code runs, and of its environment,
# under `sgxemu run` (src/shim/audit/audit.c, exec.c, auxv.c):
# - a library of the program's own (build/tests/libearly_probe.so) finds
#   SGX in its constructor, which glibc runs before any LD_PRELOAD
#   library's: CPUID, a raw system call on the device, the vDSO's
#   __vdso_sgx_enter_enclave by section headers and by dynamic symbols,
#   dl_iterate_phdr and /proc/self/auxv agreeing with getauxval;
# - with the shim preloaded alone (no audit module) the same constructor
#   sees no SGX: the probe can fail, and that is the order it guards;
# - the environment is the program's own, empty (`env -i`) included, and
#   children get the shim back however they are started.
# Last line: "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../lib/test_lib.sh"

CLI=$B/sgxemu
PROG=$B/tests/early_prog
ALL="cpuid_sgx=1 raw_stat=1 vdso_sections=1 vdso_dynamic=1 dl_iterate=1 proc_auxv=1"
if [ ! -x "$CLI" ] || [ ! -x "$PROG" ] || [ ! -f "$B/libsgxemu-audit.so" ]; then
	bad early "$CLI, $PROG or $B/libsgxemu-audit.so not built"
	finish
fi
CLI=$(realpath "$CLI")
PROG=$(realpath "$PROG")
LIB=$(realpath "$B/libsgxemu.so")

out=$("$CLI" run "$PROG" 2>&1)
case "$out" in *"ctor: $ALL"*) ok constructor_sees_sgx ;;
*) bad constructor_sees_sgx "$out" ;; esac
case "$out" in *"main: $ALL"*) ok main_sees_sgx ;; *) bad main_sees_sgx "$out" ;; esac

# The shim alone, as glibc orders it: the library's constructor runs first.
out=$(LD_PRELOAD=$LIB "$PROG" 2>&1)
case "$out" in *"ctor: cpuid_sgx=0 raw_stat=0 vdso_sections=0"*"main: $ALL"*)
	ok preload_alone_comes_too_late ;;
*) bad preload_alone_comes_too_late "$out" ;; esac

# The environment is the program's own: empty, two variables, or the
# user's own LD_PRELOAD (kept, the shim's taken out).
if asan_build; then
	skp own_environment_cases "sanitizer build: an emptied environment loses the ASAN_OPTIONS its shim needs (make test runs them)"
	finish
fi
out=$(env -i "$CLI" run "$PROG" 2>&1)
case "$out" in *"ctor: $ALL"*"env: count=0 LD_PRELOAD=(unset) LD_AUDIT=(unset)"*)
	ok empty_environment ;; *) bad empty_environment "$out" ;; esac
out=$(env -i A=1 B=2 "$CLI" run "$PROG" 2>&1)
case "$out" in *"env: count=2 LD_PRELOAD=(unset) LD_AUDIT=(unset)"*)
	ok own_environment ;; *) bad own_environment "$out" ;; esac
M=/lib/x86_64-linux-gnu/libm.so.6
out=$(env -i LD_PRELOAD=$M "$CLI" run "$PROG" 2>&1)
case "$out" in *"ctor: $ALL"*"env: count=1 LD_PRELOAD=$M LD_AUDIT=(unset)"*)
	ok users_preload_kept ;; *) bad users_preload_kept "$out" ;; esac

# Children: through the exec family with an empty environment, system(),
# posix_spawn (python's subprocess), each with the shim and its platform
# configuration (SGXEMU_*) back, and none of it in their environment.
out=$(env -i SGXEMU_EPC_SIZE=8M "$CLI" run /bin/sh -c \
	"env -i $PROG; env -i /bin/sh -c 'echo cfg=\$SGXEMU_EPC_SIZE'" 2>&1)
case "$out" in *"ctor: $ALL"*"env: count=1 LD_PRELOAD=(unset)"*"cfg=8M"*)
	ok exec_with_empty_environment ;; *) bad exec_with_empty_environment "$out" ;; esac
if command -v python3 >/dev/null; then
	out=$(env -i "$CLI" run python3 -c "
import os, subprocess
print('py', os.environ.get('LD_PRELOAD'), os.environ.get('LD_AUDIT'))
print(subprocess.run(['$PROG'], env={}, capture_output=True, text=True).stdout)
os.system('$PROG')" 2>&1)
	n=$(printf '%s\n' "$out" | grep -c "ctor: $ALL")
	case "$out" in *"py None None"*) [ "$n" -eq 2 ] && ok spawn_and_system ||
		bad spawn_and_system "$out" ;;
	*) bad spawn_and_system "$out" ;; esac
fi

finish
