#!/usr/bin/env bash
# Gramine's start-up (issue 33, item 3): the client's helloworld under
# `sgxemu run gramine-sgx helloworld`, from exec to exit (wall time, median
# of RUNS), and where that time goes:
#  - the pages Gramine adds, from the signer's memory layout (gramine-sgx-
#    sign prints it; EINIT succeeds only if the loader adds exactly these):
#    measured pages (EADD + 16 EEXTENDs) and the unmeasured ones (EADD
#    only: without EDMM, the whole free heap of the 256 MiB enclave);
#  - their cost at the per-page rates bench/build measures on this host
#    (the processor model's EADD + 16 x EEXTEND per measured page; for an
#    EADD-only page the page copy plus the model's hashing rate applied to
#    the 64-byte EADD record), and at the raw floor (SHA-256 + copy);
#  - the same start-up with EDMM (the free heap not added, EAUGed when
#    used): the difference is what adding the free pages costs;
#  - the host system calls and page faults per added page (perf stat) and
#    a profile by cause (perf record: the ADD_PAGES path's mmap and
#    process_vm_readv, page faults, other system calls, SHA-256, the
#    engine's own code, the enclave's code), where perf works.
# Gramine's own gramine-direct is not built in this client (SGX PAL only),
# so the comparison is the native helloworld, exec to exit, instead.
# Last line: "gramine_start ratio=R", R = the time the build of those pages
# takes at bench/build's rates / the measured start-up (the share it
# explains). Benchmark figures, not assertions. Skipped (exit 0) without
# ../shared/clients/gramine. RUNS (default 5); BUILD_OUT=FILE reuses a
# saved bench/build output instead of running it (about 20 s here).
set -u
RUNS=${RUNS:-5}
. "$(dirname "$0")/gramine/lib.sh"
gr_init gramine_start || exit 0

d=$dest/start_bench
rm -rf "$d" && mkdir -p "$d" || exit 1
gcc -O2 -o "$d/helloworld" "$client/helloworld.c" || exit 1
cp "$client/helloworld.manifest.template" "$d/helloworld.manifest.template"
cp "$client/helloworld.manifest.template" "$d/helloworld_edmm.manifest.template"
gr_sign "$d" helloworld EDMM=0 &&
	gr_sign "$d" helloworld_edmm EDMM=1 ||
	{ echo "gramine_start: signing failed: $(tail -n 2 "$d"/*.sign.log)"; exit 1; }

# pages LOG: "measured unmeasured" pages of the signer's memory layout.
pages() {
	local lo hi rest m=0 u=0 n
	while read -r range rest; do
		lo=${range%-*} hi=${range#*-}
		n=$(( (16#$hi - 16#$lo) / 4096 ))
		case $rest in
		*measured) m=$((m + n)) ;;
		*) u=$((u + n)) ;;
		esac
	done < <(grep -E '^ +[0-9a-f]+-[0-9a-f]+ \[' "$1")
	echo "$m $u"
}

# wall CMD...: microseconds from exec to exit.
wall() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s%N)
	echo $(( (t1 - t0) / 1000 ))
}
gramine() { (cd "$d" && "$CLI" run "$dest/install/bin/gramine-sgx" "$@"); }
native() { (cd "$d" && ./helloworld); }
med() {
	local i
	for i in $(seq 1 "$RUNS"); do wall "$@"; done | gr_median
}
ms() { awk -v u="$1" 'BEGIN { printf "%.1f", u / 1000 }'; }

echo "gramine_start: load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; runs $RUNS"
for m in helloworld helloworld_edmm; do
	out=$(gramine $m 2>&1)
	if [ "$(grep -c '^Hello, world$' <<<"$out")" != 1 ]; then
		echo "gramine_start: $m does not run: $(tail -n 3 <<<"$out" | tr '\n' '|')"
		exit 1
	fi
done
read -r pm pu < <(pages "$d/helloworld.sign.log")
read -r pm_e pu_e < <(pages "$d/helloworld_edmm.sign.log")
read -r t_g t_glo t_ghi < <(med gramine helloworld)
read -r t_e t_elo t_ehi < <(med gramine helloworld_edmm)
read -r t_n t_nlo t_nhi < <(med native)
# cpu MANIFEST: "user system" CPU seconds of one start-up (bash's times).
cpu() {
	(cd "$d" && { "$CLI" run "$dest/install/bin/gramine-sgx" "$1" >/dev/null 2>&1; times; } |
		tail -n 1 | tr 'ms' '  ' | awk '{ print $2, $4 }')
}
read -r c_user c_sys < <(cpu helloworld)
read -r e_user e_sys < <(cpu helloworld_edmm)
c_ms=$(awk -v u="$c_user" -v s="$c_sys" 'BEGIN { printf "%.0f", 1000 * (u + s) }')
e_ms=$(awk -v u="$e_user" -v s="$e_sys" 'BEGIN { printf "%.0f", 1000 * (u + s) }')
echo "start-up, exec to exit (median of $RUNS, ms): Gramine helloworld $(ms "$t_g") ($(ms "$t_glo")..$(ms "$t_ghi")); native helloworld $(ms "$t_n") ($(ms "$t_nlo")..$(ms "$t_nhi")): $(awk -v a="$t_g" -v b="$t_n" 'BEGIN { printf "%.0f", a / b }') x native (gramine-direct is not in this client, so native stands in for it)"
echo "CPU time of one start-up (a run of its own): user $c_user s + system $c_sys s = $c_ms ms, $(awk -v c="$c_ms" -v w="$t_g" 'BEGIN { p = 100000 * c / w; printf "%.0f%% of the median wall time (%s)", p, (p > 100 ? "more than one CPU busy at times, or a slower run" : "the rest off CPU: waiting for a CPU on a loaded host, or for I/O") }')"
echo "pages Gramine adds (from gramine-sgx-sign's layout): $pm measured (EADD + 16 EEXTEND) + $pu unmeasured (EADD only, the free heap) = $((pm + pu)) ($(( (pm + pu) / 256 )) MiB); with EDMM $pm_e + $pu_e"

# bench/build's per-page rates.
if [ -n "${BUILD_OUT:-}" ] && [ -f "$BUILD_OUT" ]; then
	bout=$(cat "$BUILD_OUT")
else
	bb=$B/bench/build
	[ -x "$bb" ] || (cd "$root" && make -s "$bb" >/dev/null 2>&1)
	bout=$( [ -x "$bb" ] && "$bb" 2>&1 )
fi
emu_pps=$(sed -n 's/^build: emulated.*: *\([0-9]*\) pages\/s.*/\1/p' <<<"$bout")
raw_pps=$(sed -n 's/^build: raw SHA-256.*: *\([0-9]*\) pages\/s.*/\1/p' <<<"$bout")
copy_us=$(sed -n "s/^build: EADD's page copy alone.*: *\([0-9.]*\) us\/page.*/\1/p" <<<"$bout")
ratio=0
if [ -z "$emu_pps" ] || [ -z "$raw_pps" ] || [ -z "$copy_us" ]; then
	echo "bench/build: no figures ($B/bench/build did not build or run); the share explained is not computed"
else
	sed 's/^/  /' <<<"$bout"
	read -r t_full t_hash t_copy t_eadd t_eadd_raw < <(awk -v e="$emu_pps" -v r="$raw_pps" -v c="$copy_us" 'BEGIN {
		full = 1e9 / e; hash = 1e9 / r; copy = c * 1000
		printf "%.0f %.0f %.0f %.0f %.0f\n", full, hash, copy,
			copy + (full - copy) * 64 / 5184, copy + hash * 64 / 5184 }')
	read -r ceil_us floor_us hash_us copy_all_us < <(awk -v m="$pm" -v u="$pu" -v f="$t_full" -v h="$t_hash" \
		-v c="$t_copy" -v ea="$t_eadd" -v er="$t_eadd_raw" 'BEGIN {
		printf "%.0f %.0f %.0f %.0f\n", (m * f + u * ea) / 1000, (m * (h + c) + u * er) / 1000,
			(m * h + u * h * 64 / 5184) / 1000, (m + u) * c / 1000 }')
	ratio=$(awk -v a="$ceil_us" -v b="$t_g" 'BEGIN { printf "%.3f", a / b }')
	echo "per page at bench/build's rates (ns): measured page (model's EADD + 16 EEXTEND) $t_full, EADD-only page (copy + the model's hashing of 64 bytes) $t_eadd; raw floor: SHA-256 of 5,184 bytes $t_hash, 64 bytes $(( t_hash * 64 / 5184 )), page copy $t_copy"
	echo "building these pages at those rates: $(ms "$ceil_us") ms ($pm x $t_full + $pu x $t_eadd ns); at the raw floor $(ms "$floor_us") ms, of which SHA-256 $(ms "$hash_us") ms and page copies $(ms "$copy_all_us") ms"
	echo "  = $(awk -v a="$ceil_us" -v b="$t_g" 'BEGIN { printf "%.1f", 100 * a / b }')% of the measured start-up ($(awk -v a="$ceil_us" -v b="$c_ms" 'BEGIN { printf "%.1f", a / b / 10 }')% of its CPU time); the other $(ms $((t_g - ceil_us))) ms is elsewhere (below)"
fi
# The free pages: the start-up without them (EDMM adds none, but brings
# its own costs: a 1 TiB ELRANGE, the heap EACCEPTed as it is used).
echo "with EDMM (the $((pu - pu_e)) free pages not added; a 1 TiB ELRANGE, the heap EAUGed and EACCEPTed as used): $(ms "$t_e") ms ($(ms "$t_elo")..$(ms "$t_ehi")), CPU user $e_user s + system $e_sys s = $e_ms ms against $c_ms ms: it saves the free pages but pays for its own window (profile below), so it does not isolate their cost"

# profile MANIFEST CPU_MS: one start-up under perf record, each sample
# put in one bucket by its call chain (kernel chains are complete; user
# code is taken by its leaf), in shares of the CPU time and as ms of CPU_MS.
profile() {
	local f=$d/$1.perf
	if ! (cd "$d" && perf record -q -F 1999 -g -o "$f" "$CLI" run "$dest/install/bin/gramine-sgx" "$1" >/dev/null 2>&1); then
		echo "where the time goes ($1): perf record does not work here"
		return
	fi
	perf script -i "$f" -F ip,sym,dso 2>/dev/null | awk 'BEGIN { RS = "" }
	{
		leaf = $0; sub(/\n.*/, "", leaf)
		if (leaf ~ /sgx_encl_may_map|sgx_encl_page_prot/) k = "the driver'"'"'s mmap check, page by page over each window (sgx_encl_may_map)"
		else if (/ksys_mmap_pgoff|__x64_sys_mmap/) k = "mmap system calls (without EDMM one per added page: sgxemu maps it into ELRANGE, populated)"
		else if (/process_vm_rw|sys_process_vm_readv/) k = "process_vm_readv (the ADD_PAGES path reading each source page)"
		else if (/entry_SYSCALL_64/) k = "other system calls"
		else if (/asm_exc_page_fault/) k = "page faults (first touches: EPC memfd pages written by EADD or EAUG, the loader'"'"'s and the enclave'"'"'s memory)"
		else if (/asm_exc_invalid_op|asm_exc_general_protection/) k = "traps (ENCLU, CPUID, ...: the #UD/#GP and the signal)"
		else if (/asm_exc_|asm_sysvec_|irqentry/) k = "other kernel entries (interrupts)"
		else if (leaf ~ /libcrypto/) k = "libcrypto (SHA-256 of EADD/EEXTEND, EINIT)"
		else if (leaf ~ /memfd:sgxemu-epc/) k = "enclave code (Gramine PAL/LibOS start, helloworld)"
		else if (leaf ~ /libsgxemu/) k = "other libsgxemu user code (processor model, driver, engine)"
		else if (leaf ~ / (__)?mem(cpy|move|set)/) k = "libc memcpy/memset (page copies, state arrays)"
		else if (leaf ~ /kernel/) k = "other kernel"
		else k = "the rest (loader, libc, ld.so)"
		n[k]++; all++
	}
	END { for (k in n) printf "%.1f%% %s\n", 100 * n[k] / all, k; printf "%d\n", all > "/dev/stderr" }' \
		2>"$d/samples" | sort -rn >"$d/profile"
	echo "where the time goes ($1: perf record of one start-up, $(tr -dc 0-9 <"$d/samples") samples; as ms of its $2 ms of CPU):"
	awk -v t="$2" '{ p = $1; sub(/%/, "", p); printf "  %6s %7.1f ms  %s\n", $1, p * t / 100, substr($0, index($0, $2)) }' "$d/profile"
	[ "$1" = helloworld ] || return
	# The pages Gramine adds: the ADD_PAGES path's buckets.
	awk -v t="$2" -v n=$((pm + pu)) -v c="${ceil_us:-0}" '
		/% (mmap system calls|process_vm_readv|page faults|other libsgxemu|libcrypto)/ { p = $1; sub(/%/, "", p); s += p }
		END { a = s * t / 100; printf "the pages Gramine adds: about %.0f ms of it (%.1f%%: mmap, process_vm_readv, page faults, libsgxemu and libcrypto code; page faults include the loader'"'"'s and the enclave'"'"'s), %.1f us per added page", a, s, 1000 * a / n
		       if (c > 0) printf ", %.0f x what bench/build'"'"'s rates give (%.1f ms)", 1000 * a / c, c / 1000; print "" }' "$d/profile"
}

if command -v perf >/dev/null; then
	ev=task-clock,page-faults,raw_syscalls:sys_enter
	calls="mmap process_vm_readv getpid gettid munmap mprotect rt_sigreturn ioctl"
	for c in $calls; do ev=$ev,syscalls:sys_enter_$c; done
	if (cd "$d" && perf stat -x, -o "$d/stat" -e "$ev" "$CLI" run "$dest/install/bin/gramine-sgx" helloworld >/dev/null 2>&1); then
		awk -F, -v n=$((pm + pu)) '
			/raw_syscalls:sys_enter/ { t = $1 }
			/page-faults/ { pf = $1 }
			/syscalls:sys_enter_/ { sub(/.*sys_enter_/, "", $3); o = o sprintf(" %s %.2f", $3, $1 / n); named += $1 }
			END { printf "per added page (perf stat, one start-up): %.2f host system calls:%s, others %.2f; %.2f page faults\n", t / n, o, (t - named) / n, pf / n }' "$d/stat"
		echo "  (the ADD_PAGES path: process_vm_readv reads 64 source pages at a time, one mmap maps a run of up to 256 added pages into ELRANGE, the paging lock names its owner without a gettid once the thread's stack is learned, and a zero page into an unused EPC page is not copied)"
	fi
	profile helloworld "$c_ms"
	profile helloworld_edmm "$e_ms"
else
	echo "where the time goes: no perf"
fi
echo "gramine_start: load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "gramine_start ratio=$ratio (building the pages at bench/build's rates / start-up)"
exit 0
