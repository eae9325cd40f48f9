#!/usr/bin/env bash
# A Gramine OCALL round trip (issues 26, 33): a sched_yield loop in a
# Gramine enclave (bench/gramine/ocall_loop.c; every call is an OCALL)
# against the same loop run directly, and against this host's floor.
#
# For each way of running it (the loader's ENCLU[EENTER] rewritten to the
# fast entry, the default; SGXEMU_ENCLU_PATCH=0, every entry a trap;
# SGXEMU_NO_FSGSBASE=1, the engine's arch_prctl base switch, as on a host
# whose kernel lacks FSGSBASE) it prints, per OCALL, as the difference
# between a short and a long run (so that start-up cancels out):
#  - the engine's traps and the signals its handler took (SGXEMU_TRAP_COUNTS:
#    host ENCLU, enclave ENCLU, AEX, trap-free EENTER; SIGILL, SIGSEGV,
#    SIGSYS, other), goal <= 1.1 traps: the enclave's EEXIT only;
#  - every system call of the process tree by name (perf stat on the
#    syscall tracepoints; strace -f -c where perf cannot), the engine's,
#    the shim's and Gramine's together;
#  - the median time per OCALL over RUNS runs, and its ratio to the floor:
#    one trap (the EEXIT) + the FS base writes the host needs + the direct
#    sched_yield (bench/gramine/floor.c measures each; goal <= 1.3), and,
#    where the host needs FS writes, to the floor with the GS writes too:
#    Gramine keeps its thread data in GS on both sides (its loader's and
#    its PAL's %gs: accesses are counted below), so each entry and exit
#    must switch GS as well, and the engine's switch skips a GS write
#    whose value is unchanged, so the GS writes counted are forced.
# Skipped without ../shared/clients. RUNS (default 5), N1, N2 set the sizes.
set -u
B=${B:-build}
RUNS=${RUNS:-5}
n1=${N1:-20000} n2=${N2:-60000}
root=$(cd "$(dirname "$0")/.." && pwd)
client=$(cd "$root/.." && pwd)/shared/clients/gramine
if [ ! -x "$client/setup.sh" ]; then
	echo "gramine_ocall: skipped: no Gramine client at $client"
	exit 0
fi
CLI=$(cd "$B" && pwd)/sgxemu
dest=$(cd "$B" && pwd)/gramine
if [ ! -x "$dest/install/bin/gramine-sgx" ] || [ ! -f "$dest/helloworld/enclave-key.pem" ]; then
	"$client/setup.sh" "$dest" >/dev/null 2>&1 || { echo "gramine_ocall: setup.sh failed"; exit 1; }
fi
d=$dest/ocall_bench
rm -rf "$d" && mkdir -p "$d"
gcc -O2 -o "$d/ocall_loop" "$root/bench/gramine/ocall_loop.c" || exit 1
gcc -O2 -o "$d/floor" "$root/bench/gramine/floor.c" || exit 1
sed -e 's/helloworld/ocall_loop/g' -e 's/^sgx.edmm_enable = .*/sgx.edmm_enable = false/' \
	"$client/helloworld.manifest.template" >"$d/ocall_loop.manifest.template"
echo 'loader.insecure__use_cmdline_argv = true' >>"$d/ocall_loop.manifest.template"
(cd "$d" && export PATH="$dest/install/bin:$PATH" \
	PYTHONPATH="$dest/install/lib/python3.11/site-packages" &&
 gramine-manifest -Dlog_level=error ocall_loop.manifest.template ocall_loop.manifest &&
 gramine-sgx-sign --key ../helloworld/enclave-key.pem --manifest ocall_loop.manifest \
	--output ocall_loop.manifest.sgx) >"$d/sign.log" 2>&1 ||
	{ echo "gramine_ocall: signing failed"; exit 1; }

gramine_run() {
	(cd "$d" && "$@" "$CLI" run "$dest/install/bin/gramine-sgx" ocall_loop "$n")
}

# counts N [env...]: the eight engine counters, added over the thread lines.
counts() {
	local n=$1 f=$d/counts
	shift
	rm -f "$f"
	gramine_run env "$@" SGXEMU_TRAP_COUNTS="$f" >/dev/null 2>&1
	od -v -A n -t u8 -w128 "$f" 2>/dev/null |
		awk '{ for (i = 1; i <= 10; i++) s[i] += $i }
		     END { for (i = 1; i <= 10; i++) printf "%d ", s[i]; print "" }'
}

calls="arch_prctl gettid rt_sigreturn rt_sigprocmask sched_yield prctl sigaltstack getpid mmap mprotect futex"
# syscalls N [env...]: "total name=count..." for the whole process tree.
syscalls() {
	local n=$1 f=$d/syscalls ev=raw_syscalls:sys_enter c
	shift
	for c in $calls; do ev=$ev,syscalls:sys_enter_$c; done
	if [ "$tracer" = perf ]; then
		gramine_run env "$@" perf stat -x, -o "$f" -e "$ev" >/dev/null 2>&1
		awk -F, '/raw_syscalls:sys_enter/ { t = $1 }
			 /syscalls:sys_enter_/ { sub(/.*sys_enter_/, "", $3); o = o " " $3 "=" $1 }
			 END { print t + 0 o }' "$f"
	else
		gramine_run env "$@" strace -f -c -o "$f" >/dev/null 2>&1
		awk -v want="$calls" 'BEGIN { n = split(want, w, " ") }
			$4 ~ /^[0-9]+$/ && NF >= 5 { c[$NF] = $4; t += $4 }
			END { o = t + 0; for (i = 1; i <= n; i++) o = o " " w[i] "=" c[w[i]] + 0; print o }' "$f"
	fi
}

# ns N [env...]: the loop's ns per call, median of RUNS runs.
ns() {
	local n=$1 i
	shift
	for i in $(seq 1 "$RUNS"); do
		gramine_run env "$@" 2>&1 | sed -n 's/^ns_per_call: //p'
	done | sort -n | awk '{ v[NR] = $1 } END { printf "%d %d %d\n", v[int((NR + 1) / 2)], v[1], v[NR] }'
}

# per A B: (B - A) per OCALL of the long run over the short one (a count
# that differs by a few start-up events prints as 0.000, not -0.000).
per() { awk -v a="$1" -v b="$2" -v n=$((n2 - n1)) 'BEGIN { v = (b - a) / n; if (v < 0.0005 && v > -0.0005) v = 0; printf "%.3f", v }'; }

tracer=strace
n=1 gramine_run perf stat -x, -o /dev/null -e raw_syscalls:sys_enter true >/dev/null 2>&1 && tracer=perf
command -v "$tracer" >/dev/null || tracer=none
echo "gramine_ocall: load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; runs $RUNS, OCALLs $n1 and $n2; system calls counted by $tracer"
fsgs=$("$CLI" info 2>/dev/null | sed -n 's/^FSGSBASE: *//p')
echo "FSGSBASE: ${fsgs:-unknown}"
if command -v objdump >/dev/null; then
	sgxdir=$dest/install/lib/x86_64-linux-gnu/gramine/sgx
	echo "Gramine's GS use: $(objdump -d "$sgxdir/loader" | grep -c '%gs:') %gs: accesses in its loader (host side), $(objdump -d "$sgxdir/libpal.so" | grep -c '%gs:') in its PAL (enclave side)"
fi
read -r -a floor_parts < <("$d/floor" 20000 | awk '{ printf "%s ", $2 }')
read -r t_trap t_fs t_gs t_tid t_direct <<<"${floor_parts[*]}"
echo "floor parts (ns, median of 7): trap $t_trap, ARCH_SET_FS $t_fs, ARCH_SET_GS $t_gs, gettid $t_tid, sched_yield $t_direct"
native=$(n=$n2 "$d/ocall_loop" "$n2" | sed -n 's/^ns_per_call: //p')

for mode in rewrite trap arch_prctl; do
	env=()
	case $mode in
	trap) env=(SGXEMU_ENCLU_PATCH=0) ;;
	arch_prctl) env=(SGXEMU_NO_FSGSBASE=1) ;;
	esac
	echo "== $mode${env:+ (${env[*]})}"
	read -r -a c1 < <(n=$n1 counts "$n1" "${env[@]}")
	read -r -a c2 < <(n=$n2 counts "$n2" "${env[@]}")
	traps=$(per $((c1[0] + c1[1] + c1[2])) $((c2[0] + c2[1] + c2[2])))
	echo "  engine per OCALL: $traps traps (goal <= 1.1): host ENCLU $(per "${c1[0]}" "${c2[0]}"), enclave ENCLU $(per "${c1[1]}" "${c2[1]}"), AEX $(per "${c1[2]}" "${c2[2]}"); trap-free EENTER $(per "${c1[3]}" "${c2[3]}"); signals taken: SIGILL $(per "${c1[4]}" "${c2[4]}"), SIGSEGV $(per "${c1[5]}" "${c2[5]}"), SIGSYS $(per "${c1[6]}" "${c2[6]}"), other $(per "${c1[7]}" "${c2[7]}")"
	fs_writes=0
	if [ "$tracer" != none ]; then
		read -r -a s1 < <(n=$n1 syscalls "$n1" "${env[@]}")
		read -r -a s2 < <(n=$n2 syscalls "$n2" "${env[@]}")
		line="  system calls per OCALL: $(per "${s1[0]}" "${s2[0]}") in all:"
		named1=0 named2=0
		for i in $(seq 1 $((${#s1[@]} - 1))); do
			v1=${s1[$i]#*=} v2=${s2[$i]#*=}
			named1=$((named1 + v1)) named2=$((named2 + v2))
			line="$line ${s1[$i]%%=*} $(per "$v1" "$v2")"
			[ "${s1[$i]%%=*}" = arch_prctl ] && apc=$(per "$v1" "$v2")
		done
		echo "$line; others $(per $((s1[0] - named1)) $((s2[0] - named2)))"
	fi
	# The FS writes the host needs: none where the kernel has FSGSBASE and
	# the engine uses it; one at entry and one at exit otherwise.
	if [ "$mode" = arch_prctl ] || [ "${fsgs%% *}" != kernel ]; then
		fs_writes=2
	fi
	read -r med lo hi < <(n=$n2 ns "$n2" "${env[@]}")
	floor=$(awk -v t="$t_trap" -v f="$t_fs" -v w=$fs_writes -v y="$t_direct" 'BEGIN { printf "%d", t + w * f + y }')
	echo "  time per OCALL: $med ns (median of $RUNS; $lo..$hi), $native ns direct ($(awk -v a="$med" -v b="$native" 'BEGIN { printf "%.1f", a / b }') x)"
	echo "  floor: trap $t_trap + $fs_writes FS writes x $t_fs + direct $t_direct = $floor ns; ratio $(awk -v a="$med" -v b="$floor" 'BEGIN { printf "%.2f", a / b }') (goal <= 1.3)"
	if [ "$fs_writes" -gt 0 ]; then
		floorgs=$(awk -v a="$floor" -v g="$t_gs" 'BEGIN { printf "%d", a + 2 * g }')
		echo "  floor with Gramine's 2 GS writes (x $t_gs): $floorgs ns; ratio $(awk -v a="$med" -v b="$floorgs" 'BEGIN { printf "%.2f", a / b }')${apc:+ (arch_prctl per OCALL: $apc)}"
	fi
	apc=
done
echo "gramine_ocall: load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
