#!/usr/bin/env bash
# Gramine v1.9, a real SGX runtime built from its authors' sources
# (../shared/clients/gramine, see its SOURCE.md), unmodified under sgxemu:
# its loader makes raw system calls, executes ENCLU itself with its own
# AEP, puts ELRANGE at address 0 and keeps its thread data in GS.
# setup.sh unpacks and signs helloworld into $B/gramine; then
#   sgxemu run gramine-sgx helloworld
# must print "Hello, world" and exit 0: with a client part's EPC (93.5 MiB,
# so the 256 MiB enclave pages), with the default one that holds it all,
# and with EDMM;
# without the raw system call filter it must fail as Gramine fails without
# SGX. helloworld also runs with ENCLU faults of the other vendor's kind
# (SGXEMU_FAULT_STYLE). Beyond helloworld: threads, files, signals and fork
# from our own program, Debian's python3.11 interpreter, a bash pipeline.
# Skipped, with the reason, only when the client tree is absent.
# Last line: "N passed, N failed, N skipped".
set -u
B=${B:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
client=$(cd "$root/.." && pwd)/shared/clients/gramine
pass=0 fail=0 skip=0
ok()  { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
skp() { echo "skip $1: $2"; skip=$((skip + 1)); }
summary() { echo "$pass passed, $fail failed, $skip skipped"; [ "$fail" -eq 0 ]; exit $?; }

if [ ! -x "$client/setup.sh" ] || [ ! -f "$client/gramine-1.9-install.tar.xz" ]; then
	skp gramine "no Gramine client at $client (../shared/clients is absent)"
	summary
fi
CLI=$(cd "$B" 2>/dev/null && pwd)/sgxemu
[ -x "$CLI" ] || { bad gramine "$B/sgxemu is not built"; summary; }
dest=$(cd "$B" && pwd)/gramine
# An AddressSanitizer build of libsgxemu.so (make asan) preloaded into
# Gramine's loader: its runtime cannot come first there, and its shadow
# memory covers [0x7fff8000, 2^44), where the EDMM manifest's 1 TiB
# ELRANGE at 0 must go.
asan=0
if ldd "$B/libsgxemu.so" 2>/dev/null | grep -q libasan; then
	asan=1
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
fi

if ! out=$("$client/setup.sh" "$dest" 2>&1); then
	bad setup "setup.sh failed: $(echo "$out" | tail -n 3)"
	summary
fi
ok setup

# Where RD/WRFSBASE run without kernel support ("untracked", `sgxemu
# info`), the FS base Gramine writes for the application after each entry
# is lost if the thread is preempted before its next exit: a property of
# such hosts that sgxemu cannot remove (src/engine/fsgsbase.c). There, and
# only there, a run that fails is tried again, up to three times in all,
# and each retry is said.
fsgsbase=$("$CLI" info --json 2>/dev/null | sed -n 's/.*"fsgsbase":"\([a-z]*\)".*/\1/p')
tries=1
[ "$fsgsbase" = untracked ] && tries=3

# run NAME EXPECT_RC EXPECT_TEXT [env and sgxemu options...]
run() {
	local name=$1 want_rc=$2 want=$3 out rc t n=$tries
	shift 3
	[ "$want_rc" -ne 0 ] && n=1
	for t in $(seq 1 "$n"); do
		out=$(cd "$dest/helloworld" &&
		      env "$@" timeout -s KILL 300 "$CLI" run \
			"$dest/install/bin/gramine-sgx" helloworld 2>&1)
		rc=$?
		if [ "$rc" -eq "$want_rc" ] && grep -q "$want" <<<"$out"; then
			ok "$name"
			return
		fi
		[ "$t" -lt "$n" ] && echo "    $name: attempt $t failed (exit $rc; FSGSBASE untracked on this host), again"
	done
	bad "$name" "exit $rc (want $want_rc), output: $(grep -v '^sgxemu: cpuid' <<<"$out" | tail -n 4 | tr '\n' '|')"
}

if [ "$asan" -eq 1 ]; then
	# Gramine's loader maps its GDB debug area at a fixed address inside
	# AddressSanitizer's shadow: no enclave can start there.
	skp enclave_runs "Gramine's fixed mappings overlap AddressSanitizer's shadow memory (make asan)"
	run without_raw_syscall_filter 254 'Cannot open /dev/sgx_enclave' \
		SGXEMU_RAW_SYSCALLS=off
	summary
fi
run helloworld_paging 0 '^Hello, world$' SGXEMU_EPC_SIZE=93.5M
run helloworld_whole_epc 0 '^Hello, world$'
# ENCLU's faults as the other vendor's part raises them (#GP/#PF here on
# AMD, #UD on Intel): Gramine's raw ENCLUs through the other classifier.
other_style=gp
[ "$("$CLI" info --json 2>/dev/null |
      sed -n 's/.*"enclu_trap":{"signal":"[A-Z]*","vector":\([0-9]*\).*/\1/p')" = 13 ] &&
	other_style=ud
run helloworld_other_vendor_faults 0 '^Hello, world$' SGXEMU_FAULT_STYLE=$other_style
run without_raw_syscall_filter 254 'Cannot open /dev/sgx_enclave' \
	SGXEMU_RAW_SYSCALLS=off

# sign_app DIR APP: APP.manifest.template in DIR made into APP.manifest and
# signed with helloworld's key, as a Gramine user does (log in DIR/sign.log).
sign_app() {
	(cd "$1" &&
	 PATH="$dest/install/bin:$PATH" \
	 PYTHONPATH="$dest/install/lib/python3.11/site-packages" \
	 gramine-manifest -Dlog_level=error "$2.manifest.template" "$2.manifest" &&
	 PATH="$dest/install/bin:$PATH" \
	 PYTHONPATH="$dest/install/lib/python3.11/site-packages" \
	 gramine-sgx-sign --key ../helloworld/enclave-key.pem \
		--manifest "$2.manifest" --output "$2.manifest.sgx") >"$1/sign.log" 2>&1
}

# manifest DIR APP ENTRYPOINT THREADS MOUNTS TRUSTED EXTRA: a manifest
# template for a Debian binary: Gramine's runtime glibc at /lib, the
# host's libraries, a tmpfs /tmp and a 256 MiB debug enclave, plus the
# given fs.mounts entries, trusted files and top-level lines.
manifest() {
	cat >"$1/$2.manifest.template" <<EOT
libos.entrypoint = "$3"
loader.log_level = "{{ log_level }}"
loader.insecure__use_cmdline_argv = true
loader.env.LD_LIBRARY_PATH = "/lib:/lib/x86_64-linux-gnu"
$7
fs.mounts = [
  { path = "/lib", uri = "file:{{ gramine.runtimedir() }}" },
  { path = "/lib/x86_64-linux-gnu", uri = "file:/lib/x86_64-linux-gnu" },
$5
  { type = "tmpfs", path = "/tmp" },
]
sgx.debug = true
sgx.enclave_size = "256M"
sgx.max_threads = $4
sgx.trusted_files = [
  "file:{{ gramine.runtimedir() }}/",
$6
]
EOT
}

# compare NAME DIR LINES NATIVE APP [ARGS...]: APP under Gramine in DIR must
# exit 0 and print, in its lines starting with one of LINES (a regex
# alternation) and a colon, exactly NATIVE (tried $tries times).
compare() {
	local name=$1 d=$2 lines=$3 native=$4 out rc t
	shift 4
	for t in $(seq 1 "$tries"); do
		out=$(cd "$d" && timeout -s KILL 300 "$CLI" run \
			"$dest/install/bin/gramine-sgx" "$@" 2>&1)
		rc=$?
		if [ "$rc" -eq 0 ] && [ "$(grep -E "^($lines):" <<<"$out")" = "$native" ]; then
			ok "$name"
			return
		fi
		[ "$t" -lt "$tries" ] && echo "    $name: attempt $t failed (exit $rc; FSGSBASE untracked on this host), again"
	done
	bad "$name" "exit $rc; got: $(grep -v '^sgxemu: cpuid' <<<"$out" | tail -n 5 | tr '\n' '|') want: $(tr '\n' '|' <<<"$native")"
}

# Beyond helloworld: threads, a file on Gramine's tmpfs, a signal and a
# fork (a second enclave, in a process the loader starts), from our own
# program (gramine_multi.c) with the client's manifest template adapted;
# its output must be what the same binary prints natively.
multi() {
	local d=$dest/multi
	rm -rf "$d" && mkdir -p "$d" || return 1
	gcc -O2 -pthread -o "$d/multi" "$root/tests/integration/gramine_multi.c" ||
		{ bad multi "gcc failed"; return; }
	sed -e 's/helloworld/multi/g' \
	    -e 's|^fs.mounts = \[|fs.mounts = [\n  { type = "tmpfs", path = "/tmp" },|' \
	    "$client/helloworld.manifest.template" >"$d/multi.manifest.template"
	echo 'sgx.max_threads = 8' >>"$d/multi.manifest.template"
	sign_app "$d" multi || { bad multi "manifest or signing failed: $(tail -n 2 "$d/sign.log")"; return; }
	# The default EPC holds both enclaves, as for the pipeline below:
	# with paging its threads can lose their TLS base where FSGSBASE
	# runs untracked (the retries here used to be for that).
	compare threads_file_signal_fork "$d" 'threads|file|signal|child|fork' \
		"$("$d/multi")" multi
}
multi

# Debian's own python3.11 binary and standard library, unmodified, under
# Gramine: threads, hashlib (OpenSSL), zlib, a file on tmpfs and a 32 MiB
# bytearray (the enclave pages in a client part's 93.5 MiB EPC); the output must be
# what the same interpreter prints natively. The interpreter and its
# shared libraries are trusted files; the standard library is passed
# through as allowed files (hashing all of it at signing would take long).
python_run() {
	local d=$dest/python py=/usr/bin/python3.11
	local script=$root/tests/integration/gramine_python.py
	if [ ! -x "$py" ] || [ ! -d /usr/lib/python3.11 ]; then
		skp python3 "no Debian python3.11 at $py"
		return
	fi
	rm -rf "$d" && mkdir -p "$d" || return 1
	manifest "$d" python /usr/bin/python3.11 16 \
		'  { path = "/usr/lib/python3.11", uri = "file:/usr/lib/python3.11" },
  { path = "/usr/bin/python3.11", uri = "file:/usr/bin/python3.11" },' \
		'  "file:/usr/bin/python3.11",
  "file:/lib/x86_64-linux-gnu/libz.so.1",
  "file:/lib/x86_64-linux-gnu/libexpat.so.1",' \
		'loader.env.PYTHONDONTWRITEBYTECODE = "1"
loader.env.PYTHONHASHSEED = "0"
sgx.allowed_files = [ "file:/usr/lib/python3.11/" ]'
	sign_app "$d" python || { bad python3 "manifest or signing failed: $(tail -n 2 "$d/sign.log")"; return; }
	SGXEMU_EPC_SIZE=93.5M compare python3_threads_file_memory "$d" \
		'threads|file|mem' "$("$py" "$script")" python -c "$(cat "$script")"
}
python_run

# Debian's bash under Gramine: a pipeline, a subshell and an exec'd
# command, so fork, execve, pipes and SIGCHLD (which Gramine's loader
# ignores with SA_SIGINFO set) across three enclaves. With the default EPC,
# which holds them: under paging, on a host where RD/WRFSBASE run untracked, a
# fault that sleeps in the kernel loses the TLS base `cat` has just
# written (docs/guide.md, section 5), most of the time in this script.
# Paging under Gramine is what helloworld_paging and the python3 run cover.
shell_run() {
	local d=$dest/shell sh=/bin/bash
	local script='echo pipe: hi | cat; (echo sub: $((6 * 7))); cat /dev/null; echo after: $?'
	if [ ! -x "$sh" ] || [ ! -x /bin/cat ]; then
		skp bash_pipeline "no /bin/bash or /bin/cat"
		return
	fi
	rm -rf "$d" && mkdir -p "$d" || return 1
	manifest "$d" shell /bin/bash 8 \
		'  { path = "/bin", uri = "file:/bin" },' \
		'  "file:/bin/bash",
  "file:/bin/cat",
  "file:/lib/x86_64-linux-gnu/libtinfo.so.6",' \
		'loader.env.PATH = "/bin"'
	sign_app "$d" shell || { bad bash_pipeline "manifest or signing failed: $(tail -n 2 "$d/sign.log")"; return; }
	compare bash_pipeline "$d" 'pipe|sub|after' \
		"$("$sh" -c "$script")" shell -c "$script"
}
shell_run

# own_app NAME APP EDMM EXTRA EXPECT: our program tests/integration/
# gramine_APP.c under Gramine with the client's helloworld manifest made
# its own (sgx.edmm_enable = EDMM, EXTRA lines appended); its lines
# starting with "APP:" must be EXPECT (or, for "native", what the same
# binary prints natively).
own_app() {
	local name=$1 app=$2 edmm=$3 extra=$4 want=$5 d=$dest/$2 out rc t
	rm -rf "$d" && mkdir -p "$d" || return 1
	gcc -O2 -pthread -o "$d/$app" "$root/tests/integration/gramine_$app.c" ||
		{ bad "$name" "gcc failed"; return; }
	sed -e "s/helloworld/$app/g" \
	    -e "s/^sgx.edmm_enable = .*/sgx.edmm_enable = $edmm/" \
	    "$client/helloworld.manifest.template" >"$d/$app.manifest.template"
	printf '%s\n' "$extra" >>"$d/$app.manifest.template"
	sign_app "$d" "$app" || { bad "$name" "manifest or signing failed: $(tail -n 2 "$d/sign.log")"; return; }
	[ "$want" = native ] && want=$("$d/$app" | grep -E "^$app[a-z]*:")
	for t in $(seq 1 "$tries"); do
		out=$(cd "$d" && timeout -s KILL 300 "$CLI" run \
			"$dest/install/bin/gramine-sgx" "$app" 2>&1)
		rc=$?
		if [ "$rc" -eq 0 ] && [ "$(grep -E "^$app[a-z]*:" <<<"$out")" = "$want" ]; then
			ok "$name"
			return
		fi
		[ "$t" -lt "$tries" ] && echo "    $name: attempt $t failed (exit $rc; FSGSBASE untracked on this host), again"
	done
	bad "$name" "exit $rc; got: $(grep -v '^sgxemu: cpuid' <<<"$out" | tail -n 5 | tr '\n' '|') want: $want"
}

# Gramine keeps its RDTSC clock (it needs CPUID leaf 0x15, which an AMD
# host and most guests lack): gettimeofday in the enclave is then many
# times faster than sched_yield, an OCALL; with an OCALL per time query
# the two are alike (gramine_clock.c says which, as a ratio of rates).
own_app gettimeofday_rdtsc_clock clock false '' 'clock: rdtsc'

# The loader's ENCLU[EENTER] (after `mov $2,%rax`) is rewritten at its
# first trap into a jump to the engine's fast entry (src/engine/
# enclu_patch.c): then its entries, one per OCALL return, take no trap
# (SGXEMU_TRAP_COUNTS counts them; bench/gramine_ocall.sh times them).
counts=$dest/trap_counts
rm -f "$counts"
run helloworld_counted 0 '^Hello, world$' SGXEMU_TRAP_COUNTS="$counts"
# One 128-byte line of sixteen counters per thread slot: add them up.
read -r h e a f < <(od -v -A n -t u8 -w128 "$counts" 2>/dev/null |
	awk '{ for (i = 1; i <= 4; i++) s[i] += $i }
	     END { print s[1] + 0, s[2] + 0, s[3] + 0, s[4] + 0 }')
if [ "${f:-0}" -gt 0 ] && [ "${h:-0}" -lt "${f:-0}" ]; then
	ok loader_eenter_without_trap
else
	bad loader_eenter_without_trap "host ENCLU traps ${h:-?}, EENTERs without a trap ${f:-?}"
fi

# An environment without HOME (Gramine's own tests start programs so): the
# platform comes up all the same, and the program, given the host's
# environment, finds in it neither LD_PRELOAD nor LD_AUDIT, which sgxemu
# run put there for itself. (Before: "platform secrets: no location", then
# Gramine's "Cannot open /dev/sgx_enclave", exit 254.)
env_run() {
	local native out rc t home=unset
	[ -n "${HOME:-}" ] && home=set
	own_app environment_hides_the_shim env false \
		'loader.insecure__use_host_env = true' \
		"env: sgxemu variables 0, HOME $home, MARK unset"
	[ -x "$dest/env/env" ] || return
	native=$(env -i MARK=m "$dest/env/env")
	for t in $(seq 1 "$tries"); do
		out=$(cd "$dest/env" && env -i MARK=m /usr/bin/timeout -s KILL 300 \
			"$CLI" run "$dest/install/bin/gramine-sgx" env 2>&1)
		rc=$?
		if [ "$rc" -eq 0 ] && [ "$(grep '^env:' <<<"$out")" = "$native" ]; then
			ok environment_without_home
			return
		fi
	done
	bad environment_without_home "exit $rc; got: $(tail -n 3 <<<"$out" | tr '\n' '|') want: $native"
}
env_run

# Gramine's exitless calls: its RPC threads block every signal but one with
# a raw rt_sigprocmask on the host, then make raw calls the filter traps
# (before: SIGSYS blocked, the process killed right after ECREATE). The
# program itself blocks everything and maps memory by raw system calls. As
# many RPC threads as enclave threads: each may hold one in a blocking
# OCALL (Gramine's IPC helper reads a socket all along).
own_app exitless_rpc_threads rawmask false 'sgx.insecure__rpc_thread_num = 8
sgx.max_threads = 8' 'rawmask: mask SIGUSR1 blocked
rawmask: mmap 90
rawmask: thread line 0
rawmask: thread line 1
rawmask: thread line 2'


# Issue 46's SGX-only failures of Gramine's own suite that came from the
# AEP rewrite writing below URSP, where Gramine's enclave builds an
# OCALL's arguments and buffers across an AEX (fixed in 18cea31): its
# pipes are TLS sessions, and a corrupted record read back as EACCES
# (test_093_pipe_race, here four writer threads and a reader, 80000
# records); getdents_large_dir and proc met "SIGSEGV inside untrusted
# PAL" (here 1000 files in a host directory, a fork, the child's
# getdents64 in 200-byte buffers and /proc).
own_app pipe_race_threads pipe_race false 'sgx.max_threads = 8' native
own_app fork_getdents_proc forkdir false 'sgx.allowed_files = [ "file:data/" ]' \
	'forkdir: child lists 1000 files
forkdir: child status readable yes
forkdir: child maps readable yes
forkdir: child sees its parent in /proc yes
forkdir: child status 0
forkdir: parent lists 1000 files'


# EDMM (sgx.edmm_enable = true): a 1 TiB ELRANGE at 0, the heap grown by
# EACCEPT of pages not there yet (EAUG on the EACCEPT's fault), the SGX2
# ioctls; and on an SGX1 platform Gramine must refuse it.
if ! out=$(EDMM=1 "$client/setup.sh" "$dest" 2>&1); then
	bad setup_edmm "EDMM=1 setup.sh failed: $(echo "$out" | tail -n 3)"
	summary
fi
ok setup_edmm
run helloworld_edmm 0 '^Hello, world$'
run edmm_on_sgx1 255 'EDMM feature was requested in manifest, but CPU' SGXEMU_SGX2=0
# A MAP_NORESERVE mapping touched under EDMM (Gramine commits its pages
# at the first fault, which needs EXINFO, as Gramine's own tests set it),
# with an XFRM below XCR0: AVX-512 disabled on a host that has it, PKRU
# left out (Gramine's default) on a host that has it. Before xstate.c
# the enclave's all-ones XRSTOR loaded those features from past its
# XFRM-sized buffer (a PKRU from there made every access fault).
own_app noreserve_edmm_xfrm_below_xcr0 noreserve true 'sgx.use_exinfo = true
sgx.cpu_features.avx512 = "disabled"' native
# Gramine's test_121_gethostname_pass_etc under EDMM (issue 46: once
# MODIFY_TYPES answered EINVAL, then Gramine's BUG() in libos_malloc.c):
# gethostname and /etc/hostname in the program and two forked children,
# each child a second EDMM enclave. Not reproduced here (with 16 MiB and
# 32 MiB of EPC either); kept as the regression program. Gramine v1.9
# gives the program no /etc/hostname of its own.
n=$(uname -n)
own_app edmm_fork_hostname hostname true 'sys.enable_extra_runtime_domain_names_conf = true' \
	"hostname: parent gethostname $n, /etc/hostname (no /etc/hostname)
hostname: child 1 gethostname $n, /etc/hostname (no /etc/hostname)
hostname: child 1 status 0
hostname: child 2 gethostname $n, /etc/hostname (no /etc/hostname)
hostname: child 2 status 0"
summary
