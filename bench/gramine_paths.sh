#!/usr/bin/env bash
# Gramine's hot paths other than the bare OCALL (issue 33, item 2), each a
# small loop of our own (bench/gramine/paths.c) run under Gramine v1.9 with
# sgxemu and the same binary run directly (natively, no Gramine):
#   file   pwrite + pread of 4 KiB on an allowed host file (sgx.allowed_files,
#          fs.mounts /data): two OCALLs;
#   pipe   a one-byte round trip between two threads over two pipes:
#          Gramine's pipes carry TLS records (its SGX PAL encrypts them),
#          so each message is one write OCALL and two read OCALLs (record
#          header, then body): six per round trip;
#   clock  clock_gettime(CLOCK_MONOTONIC), which Gramine serves inside from
#          RDTSC (CPUID leaf 0x15 given by sgxemu): no exit;
#   fault  the first write to a fresh page of a MAP_NORESERVE heap mapping
#          under EDMM (sgx.edmm_enable, sgx.use_exinfo): the page is EAUGed
#          on the fault and the enclave sees a #PF (an AEX), Gramine's
#          handler EACCEPTs it and returns by EEXIT: three traps at least
#          (AEX, EACCEPT, EEXIT) once EENTER and ERESUME take the fast path;
#   getpid a reference, not judged: Gramine's in-enclave system call path
#          (its LibOS answers getpid without an exit); the clock is also
#          put against this in-enclave floor (getpid + the direct call).
# For each path: ns/op under Gramine and direct (median of RUNS runs), the
# ratio; the engine's traps and signals per op (SGXEMU_TRAP_COUNTS, as the
# difference between a short and a long run so start-up cancels out) and
# the host system calls per op (perf stat, where perf works); a floor:
# the traps the op needs (each enclave ENCLU and exception) + its changes
# of mode x the base writes the host needs at each (an FS and a GS write
# where the kernel lacks FSGSBASE, as bench/gramine_ocall.sh; the parts
# from bench/gramine/floor.c, measured again right before each path)
# + the direct op, and the ratio to it (also printed against FS writes
# alone); the clock, which needs no exit, against Gramine's in-enclave
# system call path (the getpid reference) + the direct call. A path is at
# its floor when that ratio is <= 1.3.
# Benchmark figures, not assertions. Last line: "gramine_paths ratio=R",
# R the worst ratio to its floor of the four paths. Skipped (exit 0) without
# ../shared/clients/gramine. RUNS (default 5), N_FILE, N_PIPE, N_CLOCK,
# N_FAULT, N_GETPID (the long run; the short one is a third) set the sizes.
set -u
RUNS=${RUNS:-5}
N_FILE=${N_FILE:-6000} N_PIPE=${N_PIPE:-1500} N_CLOCK=${N_CLOCK:-300000}
N_FAULT=${N_FAULT:-6000} N_GETPID=${N_GETPID:-300000}
. "$(dirname "$0")/gramine/lib.sh"
gr_init gramine_paths || exit 0

d=$dest/paths_bench
rm -rf "$d" && mkdir -p "$d/data" || exit 1
gcc -O2 -pthread -o "$d/paths" "$root/bench/gramine/paths.c" || exit 1
gcc -O2 -o "$d/floor" "$root/bench/gramine/floor.c" || exit 1
# paths: EDMM off (as the client's helloworld); paths_edmm: EDMM on, with
# EXINFO, which Gramine needs to commit MAP_NORESERVE pages on the fault.
for m in paths paths_edmm; do
	edmm=false
	[ $m = paths_edmm ] && edmm=true
	sed -e 's/helloworld/paths/g' -e "s/^sgx.edmm_enable = .*/sgx.edmm_enable = $edmm/" \
	    -e 's|^fs.mounts = \[|fs.mounts = [\n  { path = "/data", uri = "file:data" },|' \
	    "$client/helloworld.manifest.template" >"$d/$m.manifest.template"
	cat >>"$d/$m.manifest.template" <<-EOT
	loader.insecure__use_cmdline_argv = true
	sgx.max_threads = 8
	sgx.allowed_files = [ "file:data/" ]
	EOT
	[ $m = paths_edmm ] && echo 'sgx.use_exinfo = true' >>"$d/$m.manifest.template"
	gr_sign "$d" $m || { echo "gramine_paths: signing $m failed: $(tail -n 2 "$d/$m.sign.log")"; exit 1; }
done

# run MANIFEST PATH N [prefix...]: the loop under Gramine (stdout only).
run() {
	local m=$1 p=$2 n=$3
	shift 3
	(cd "$d" && "$@" "$CLI" run "$dest/install/bin/gramine-sgx" $m $p "$n" 2>/dev/null)
}

tracer=none
command -v perf >/dev/null &&
	perf stat -x, -o /dev/null -e raw_syscalls:sys_enter true >/dev/null 2>&1 && tracer=perf

# counts MANIFEST PATH N: the twelve engine counters, then the host system
# calls of the process tree (-1 without perf).
counts() {
	local f=$d/counts s=$d/syscalls c
	rm -f "$f" "$s"
	if [ $tracer = perf ]; then
		run "$1" "$2" "$3" env SGXEMU_TRAP_COUNTS="$f" perf stat -x, -o "$s" \
			-e raw_syscalls:sys_enter >/dev/null
		c=$(awk -F, '/raw_syscalls:sys_enter/ { print $1 + 0 }' "$s")
	else
		run "$1" "$2" "$3" env SGXEMU_TRAP_COUNTS="$f" >/dev/null
	fi
	echo "$(gr_counts "$f")${c:--1}"
}

# ns MANIFEST PATH N: median, lowest, highest ns/op of RUNS runs under
# Gramine; ns_direct PATH N: the same, run directly.
ns() {
	local i
	for i in $(seq 1 "$RUNS"); do
		run "$1" "$2" "$3" | sed -n 's/^ns_per_op: //p'
	done | gr_median
}
ns_direct() {
	local i
	for i in $(seq 1 "$RUNS"); do
		(cd "$d" && ./paths "$1" "$2" | sed -n 's/^ns_per_op: //p')
	done | gr_median
}

f2() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

echo "gramine_paths: load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; runs $RUNS; system calls counted by $tracer"
fsgs=$("$CLI" info 2>/dev/null | sed -n 's/^FSGSBASE: *//p')
echo "FSGSBASE: ${fsgs:-unknown}; $("$CLI" info 2>/dev/null | grep '^RDTSC in enclave:')"
# The floor of a path: the traps it needs (each enclave ENCLU and each
# exception is one: the instruction faults in user mode) and, per change
# of mode (exit, AEX, entry, resume), the base writes the host needs:
# none where the kernel has FSGSBASE and the engine uses it; otherwise an
# FS and a GS write, each an arch_prctl: Gramine's enclave keeps its TCB
# in GS (the TCS's OGSBASE) and its host side its own in GS (the
# loader's), so both bases differ between the two modes. The parts are
# measured again right before each path (floor_parts), so that the floor
# and the loop it is put against see the same host.
bases=1
[ "${fsgs%% *}" = kernel ] && bases=0
floor_parts() {
	read -r t_trap t_fs t_gs t_tid t_yield < <("$d/floor" 20000 | awk '{ printf "%s ", $2 } END { print "" }')
	t_mode_fs=$((bases * t_fs)) t_mode=$((bases * (t_fs + t_gs)))
}

worst=0 worst_path= at= notat= summary=
declare -A G D
for p in ${PATHS:-file pipe getpid clock fault}; do
	# exits: the traps the op needs on its critical path; modes: its
	# changes of mode there; need: the traps it needs in all.
	m=paths exits=0 modes=0 need=
	case $p in
	file) n=$N_FILE exits=2 modes=4 what="pwrite + pread of 4 KiB on an allowed host file: 2 OCALLs (2 EEXIT traps, 4 changes of mode)" ;;
	pipe) n=$N_PIPE exits=4 modes=8 need=6 what="one-byte round trip between two threads over two pipes: 6 OCALLs (a write and two reads per TLS record, two records: 6 EEXIT traps, 12 changes of mode); on the critical path 4 traps and 8 changes of mode (each message's write exit, the reader's return from its blocked read, its body read, ...; each thread's next header read overlaps the other's work, on 2 CPUs)" ;;
	clock) n=$N_CLOCK what="clock_gettime(CLOCK_MONOTONIC), served inside from RDTSC: no exit" ;;
	fault) n=$N_FAULT m=paths_edmm exits=3 modes=4 what="first write to a fresh MAP_NORESERVE page under EDMM: 3 traps (the #PF's AEX, the handler's EEXIT, EACCEPT) and 4 changes of mode (AEX, the handler's EENTER and EEXIT, ERESUME)" ;;
	getpid) n=$N_GETPID what="(reference, not judged) getpid, answered by Gramine's LibOS inside: no exit" ;;
	esac
	case $p in
	file) note="each OCALL's EEXIT traps, its EENTER takes the fast entry; the rest is Gramine's OCALL marshalling (4 KiB copied out and back through untrusted memory) and this host's noise" ;;
	pipe) note="the echo thread is one Gramine's loader makes by raw clone() on its creator's TLS: after its first entry it takes the fast entry too (its TCB by its alternate stack), so the 6 OCALLs are 6 traps; the two threads' traps partly overlap on 2 CPUs" ;;
	clock) note="no exit and no trap: Gramine's LibOS system call path and its RDTSC clock, enclave code at native speed; see the in-enclave floor below" ;;
	fault) note="SIGSEGV: one, the EAUG and then at once the #PF's AEX (the pending page would only fault again); Gramine's host handler's EENTER takes the fast entry (on the alternate stack, which it fits below the handler's frames: one sigaltstack); enclave ENCLU: the exception handler's EEXIT, then the EACCEPT after the ERESUME; the ERESUME at Gramine's AEP takes the fast entry once the AEP is rewritten (its lock incq moved into the trampoline): an rt_sigreturn, no trap" ;;
	*) note= ;;
	esac
	n1=$((n / 3 > 0 ? n / 3 : 1)) dn=$((n - n1))
	echo "== $p: $what"
	[ $p = getpid ] || floor_parts
	read -r -a c1 < <(counts $m $p $n1)
	read -r -a c2 < <(counts $m $p $n)
	if [ "${#c1[@]}" -lt 13 ] || [ "${#c2[@]}" -lt 13 ]; then
		echo "  counts: the run failed"
		continue
	fi
	read -r g glo ghi < <(ns $m $p $n)
	read -r dir dlo dhi < <(ns_direct $p $n)
	G[$p]=$g D[$p]=$dir
	traps=$(gr_per $((c1[0] + c1[1] + c1[2])) $((c2[0] + c2[1] + c2[2])) $dn)
	sc=n/a
	[ "${c1[12]}" -ge 0 ] && sc=$(gr_per "${c1[12]}" "${c2[12]}" $dn)
	echo "  time per op: Gramine $g ns (median of $RUNS; $glo..$ghi), direct $dir ns ($dlo..$dhi): $(f2 "$g" "$dir") x direct"
	echo "  engine per op: $traps traps: host ENCLU $(gr_per "${c1[0]}" "${c2[0]}" $dn), enclave ENCLU $(gr_per "${c1[1]}" "${c2[1]}" $dn), AEX $(gr_per "${c1[2]}" "${c2[2]}" $dn); trap-free EENTER $(gr_per "${c1[3]}" "${c2[3]}" $dn), ERESUME $(gr_per "${c1[11]}" "${c2[11]}" $dn); signals taken: SIGILL $(gr_per "${c1[4]}" "${c2[4]}" $dn), SIGSEGV $(gr_per "${c1[5]}" "${c2[5]}" $dn), SIGSYS $(gr_per "${c1[6]}" "${c2[6]}" $dn), other $(gr_per "${c1[7]}" "${c2[7]}" $dn); host system calls $sc"
	[ $p = getpid ] && continue
	floor=$((exits * t_trap + modes * t_mode + dir))
	floor_fs=$((exits * t_trap + modes * t_mode_fs + dir))
	r=$(f2 "$g" $floor)
	# The clock has no exit: its floor is Gramine's own system call path
	# (the getpid reference, run before it) with the direct call.
	[ $p = clock ] && [ -n "${G[getpid]:-}" ] && floor=$((G[getpid] + dir)) floor_fs=$floor r=$(f2 "$g" $floor)
	need=${need:-$exits}
	extra=$(awk -v t="$traps" -v e=$need 'BEGIN { x = t - e; printf "%.2f", (x > 0 ? x : 0) }')
	rest=$(awk -v g="$g" -v f=$floor -v x="$extra" -v te=$t_trap 'BEGIN { r = g - f - x * te; printf "%d", (r > 0 ? r : 0) }')
	verdict="not at its floor (goal <= 1.3)"
	awk -v r="$r" 'BEGIN { exit !(r <= 1.3) }' && verdict="at its floor (<= 1.3)"
	if [ $p = clock ] && [ -n "${G[getpid]:-}" ]; then
		echo "  floor: no exit; Gramine's in-enclave system call path (getpid reference ${G[getpid]} ns) + direct $dir = $floor ns; ratio $r: $verdict (against the bare direct call: $(f2 "$g" "$dir"))"
	else
		echo "  floor (parts just measured: trap $t_trap, ARCH_SET_FS $t_fs, ARCH_SET_GS $t_gs ns): $exits traps + $modes changes of mode$([ "$need" != "$exits" ] && echo " on the critical path") x $t_mode (an FS and a GS write) + direct $dir = $floor ns; ratio $r: $verdict (FS writes alone, $floor_fs ns: $(f2 "$g" $floor_fs))"
	fi
	echo "  beyond the floor: $extra traps more than the $need needed (~$(awk -v x="$extra" -v te=$t_trap 'BEGIN { printf "%d", x * te }') ns at $t_trap each), $rest ns else"
	echo "  where: $note"
	summary="$summary$(printf '\n  %-6s %10s %10s %8s %6s %8s %10s %8s  %s' $p "$g" "$dir" "$(f2 "$g" "$dir")" $exits "$traps" $floor "$r" "${verdict%% (*}")"
	if awk -v r="$r" 'BEGIN { exit !(r <= 1.3) }'; then at="$at $p"; else notat="$notat $p"; fi
	awk -v r="$r" -v w=$worst 'BEGIN { exit !(r > w) }' && worst=$r worst_path=$p
done
# The clock's gap without exits is Gramine's own in-enclave code: its
# system call path (the getpid reference) and its RDTSC arithmetic.
if [ -n "${G[clock]:-}" ] && [ -n "${G[getpid]:-}" ]; then
	fi_floor=$((G[getpid] + D[clock]))
	echo "clock against its in-enclave floor (Gramine's system call path, the getpid reference $((G[getpid])) ns, + the direct clock_gettime ${D[clock]} ns = $fi_floor ns): ratio $(f2 "${G[clock]}" $fi_floor); no trap per op, so no engine work to remove"
fi
echo "summary (ns per op; exits = the traps the op needs; traps = the engine's, measured):"
printf '  %-6s %10s %10s %8s %6s %8s %10s %8s  %s' path gramine direct x_direct exits traps floor x_floor verdict
echo "$summary"
echo "at their floor (ratio to floor <= 1.3):${at:- none}; not at their floor:${notat:- none}"
if [ -n "${fi_floor:-}" ]; then
	fr=$(f2 "${G[clock]}" $fi_floor)
	awk -v r="$fr" 'BEGIN { exit !(r <= 1.3) }' && fv="at" || fv="not at"
	echo "  clock against the in-enclave floor (no exit, Gramine's system call path + the direct call): $fr, $fv that floor"
fi
echo "gramine_paths: load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "gramine_paths ratio=${worst} (worst ratio to floor: ${worst_path:-none})"
exit 0
