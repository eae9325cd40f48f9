/* SPDX-License-Identifier: MIT */
/*
 * Open Enclave 0.19's empty ECALL and OCALL (issue 45, item 4), each
 * against this host's floor, and OE's switchless calls against regular
 * ones. The program is our own (bench/openenclave: calls.edl, enc.c,
 * host.c), built with OE's tools (bench/openenclave/build.sh) and run
 * under `sgxemu run` on Intel's PSW library, as
 * tests/integration/test_openenclave.sh sets OE up in B/openenclave.
 *
 * The transition floor: one ENCLU trap round trip (sgxemu_trap_cost_ns),
 * as OE's host enters through __vdso_sgx_enter_enclave, so that an ECALL
 * or an OCALL needs one trap (the enclave's EEXIT; the entry takes the
 * engine's fast path), plus the FS base writes the host kernel forces at
 * the two changes of mode: none where the engine uses the kernel's
 * FSGSBASE, otherwise two arch_prctl(ARCH_SET_FS), measured here. OE's
 * runtimes do far more per call than the SDK's (marshalling on both
 * sides, its thread-specific slots walked at every ECALL's end), which no
 * platform can take away: that work is measured as the same program in
 * OE's simulation mode (no ENCLU, no sgxemu), and the floor a call is
 * judged against is the transition floor + OE's own work. Goal: 1.3, as
 * for the SDK (bench/sdk_calls). Both ratios are printed.
 *
 * Switchless: one host worker and one enclave worker (the OE sample's
 * setting), with the AEX tick on (the default) and off
 * (SGXEMU_AEX_TICK=0), on the host as it is and with two busy loops of
 * ours beside (two more runnable threads on this host's CPUs). For each:
 * time per call (median of 3 runs), the engine's counts per call
 * (SGXEMU_TRAP_COUNTS: enclave ENCLU traps, i.e. EEXITs, and AEXs, with
 * those the tick made) against the regular calls in the same conditions;
 * with the tick on, OE's regular and switchless ECALLs in its simulation
 * mode (OE's own threads and protocol with no sgxemu under them); and the
 * host's own hand-off (below). An enclave worker that found no call in
 * 4096 spins leaves the enclave to sleep (an OCALL: one EEXIT), so a
 * switchless ECALL's enclave ENCLU count is its worker's sleeps.
 *
 * Without the clients (../shared/clients) it prints why and the ratios as
 * nan. N (argument 1, default 100000) calls per run of the regular calls
 * against the floor (best of 3); M (argument 2, default 20000) calls per
 * run of the switchless comparison (M / 4 in simulation mode). Last
 * lines: "oe_calls_ocall ratio=R target=1.3" (OCALL / (transition floor
 * + OE's own work)), then "oe_calls ratio=R target=1.3" (the ECALL's).
 */
#include <asm/prctl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sgxemu/sgxemu.h"

/* The counters of SGXEMU_TRAP_COUNTS (src/engine/trap_count.c). */
enum { C_HOST_ENCLU, C_ENCLAVE_ENCLU, C_AEX, C_FAST_EENTER, C_TICK_AEX = 9,
       C_WORDS = 16 };

static char b[PATH_MAX], root[PATH_MAX], out[PATH_MAX + 64];
static char psw[PATH_MAX + 64], counts_file[PATH_MAX + 128];

static void give_up(const char *why)
{
	printf("oe_calls: %s\n", why);
	printf("oe_calls_ocall ratio=nan target=1.3\n");
	printf("oe_calls ratio=nan target=1.3\n");
	exit(0);
}

struct result {
	double ns;		/* per call */
	double enclave_enclu;	/* the engine's counts per call */
	double aex, tick_aex, host_enclu, fast_eenter;
};

/* The counters in counts_file, added over its thread lines. */
static void read_counts(uint64_t c[C_WORDS])
{
	uint64_t line[C_WORDS];
	FILE *f = fopen(counts_file, "rb");

	memset(c, 0, sizeof(uint64_t) * C_WORDS);
	if (!f)
		return;
	while (fread(line, sizeof(line), 1, f) == 1)
		for (int i = 0; i < C_WORDS; i++)
			c[i] += line[i];
	fclose(f);
}

/*
 * One run of calls_host: KIND (regular, switchless under sgxemu run;
 * simulate, simulate-switchless directly), WHAT (ecall, ocall), @n calls,
 * the tick on or off; ns per call and the engine's counts per call
 * (warm-up and start-up included: n / 10 + 1 calls and the enclave's
 * creation, under 1% of the calls; none in simulation mode).
 */
static int run(const char *kind, const char *what, long n, int tick,
	       struct result *r)
{
	char cmd[8 * PATH_MAX], line[256], key[32];
	uint64_t c[C_WORDS];
	double v, calls = (double)(n + n / 10 + 1);
	int found = 0;
	FILE *p;

	unlink(counts_file);
	if (!strncmp(kind, "simulate", 8))	/* OE alone: not under sgxemu */
		snprintf(cmd, sizeof(cmd),
			 "cd '%s' && ./calls_host calls_enc.signed %s %s %ld %s "
			 "2>/dev/null", out, kind, what, n,
			 strcmp(kind, "simulate") ? "1 1" : "");
	else
		snprintf(cmd, sizeof(cmd),
			 "cd '%s' && LD_LIBRARY_PATH='%s' SGXEMU_TRAP_COUNTS='%s' "
			 "%s '%s/sgxemu' run ./calls_host calls_enc.signed %s %s "
			 "%ld %s 2>/dev/null", out, psw, counts_file,
			 tick ? "" : "SGXEMU_AEX_TICK=0", b, kind, what, n,
			 strcmp(kind, "switchless") ? "" : "1 1");
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%31s %lf", key, &v) == 2 &&
		    !strncmp(key, what, 5) && !strcmp(key + 5, "_ns")) {
			r->ns = v;
			found = 1;
		}
	if (pclose(p) || !found)
		return -1;
	read_counts(c);
	r->enclave_enclu = (double)c[C_ENCLAVE_ENCLU] / calls;
	r->host_enclu = (double)c[C_HOST_ENCLU] / calls;
	r->fast_eenter = (double)c[C_FAST_EENTER] / calls;
	r->aex = (double)c[C_AEX] / calls;
	r->tick_aex = (double)c[C_TICK_AEX] / calls;
	return 0;
}

/* Median ns of one arch_prctl(ARCH_SET_FS) writing the current base. */
static double set_fs_ns(void)
{
	unsigned long fs;
	double t[15];
	struct timespec a, z;

	syscall(SYS_arch_prctl, ARCH_GET_FS, &fs);
	for (int r = 0; r < 15; r++) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (int i = 0; i < 10000; i++)
			syscall(SYS_arch_prctl, ARCH_SET_FS, fs);
		clock_gettime(CLOCK_MONOTONIC, &z);
		t[r] = ((z.tv_sec - a.tv_sec) * 1e9 + (z.tv_nsec - a.tv_nsec)) /
		       10000;
	}
	for (int i = 1; i < 15; i++)
		for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
			double x = t[j];

			t[j] = t[j - 1];
			t[j - 1] = x;
		}
	return t[7];
}

/*
 * The host's own floor for a switchless call: the same hand-off between
 * two host threads, no enclave, no sgxemu. The caller posts into a slot
 * and spins (pause) until the worker has cleared it; the worker spins
 * (pause) on the slot and after SPINS empty looks sleeps on a futex,
 * which a caller that finds it asleep wakes: the protocol of OE's
 * switchless workers (4096 spins), in our own code.
 */
#define SPINS 4096

static struct {
	_Atomic int call, event, stop;
	long sleeps;
} slot;

static void futex(_Atomic int *addr, int op, int val)
{
	syscall(SYS_futex, addr, op, val, NULL, NULL, 0);
}

static void *handoff_worker(void *arg)
{
	unsigned spins = 0;

	(void)arg;
	while (!atomic_load(&slot.stop)) {
		if (atomic_load(&slot.call)) {
			atomic_store(&slot.call, 0);
			spins = 0;
			continue;
		}
		if (++spins >= SPINS) {
			int one = 1;

			spins = 0;
			/* A wake that came already is taken; otherwise sleep. */
			if (!atomic_compare_exchange_strong(&slot.event, &one, 0)) {
				slot.sleeps++;
				while (!atomic_load(&slot.event) &&
				       !atomic_load(&slot.stop))
					futex(&slot.event, FUTEX_WAIT_PRIVATE, 0);
			}
		}
		__asm__ volatile("pause");
	}
	return NULL;
}

/* ns per hand-off of @n; *sleeps: the worker's sleeps per hand-off. */
static double handoff_ns(long n, double *sleeps)
{
	struct timespec a, z;
	pthread_t t;

	atomic_store(&slot.call, 0);
	atomic_store(&slot.event, 1);
	atomic_store(&slot.stop, 0);
	slot.sleeps = 0;
	if (pthread_create(&t, NULL, handoff_worker, NULL))
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		int zero = 0;

		atomic_store(&slot.call, 1);
		if (atomic_compare_exchange_strong(&slot.event, &zero, 1))
			futex(&slot.event, FUTEX_WAKE_PRIVATE, 1);
		while (atomic_load(&slot.call))
			__asm__ volatile("pause");
	}
	clock_gettime(CLOCK_MONOTONIC, &z);
	atomic_store(&slot.stop, 1);
	atomic_store(&slot.event, 1);
	futex(&slot.event, FUTEX_WAKE_PRIVATE, 1);
	pthread_join(t, NULL);
	*sleeps = (double)slot.sleeps / (double)n;
	return ((z.tv_sec - a.tv_sec) * 1e9 + (z.tv_nsec - a.tv_nsec)) /
	       (double)n;
}

static pid_t busy[2];

/* Two busy loops of ours, started and stopped by their ids. */
static void busy_loops(int on)
{
	for (int i = 0; i < 2; i++) {
		if (on) {
			busy[i] = fork();
			if (busy[i] == 0)
				for (volatile unsigned long x = 0;; x++)
					;
		} else if (busy[i] > 0) {
			kill(busy[i], SIGKILL);
			waitpid(busy[i], NULL, 0);
			busy[i] = 0;
		}
	}
}

/*
 * The run of median time of three (the counts with it): on a host others
 * load, one run can fall in a quiet or a busy second.
 */
static int run3(const char *kind, const char *what, long n, int tick,
		struct result *r)
{
	struct result t[3], x;

	for (int i = 0; i < 3; i++)
		if (run(kind, what, n, tick, &t[i]))
			return -1;
	for (int i = 1; i < 3; i++)
		for (int j = i; j > 0 && t[j].ns < t[j - 1].ns; j--)
			x = t[j], t[j] = t[j - 1], t[j - 1] = x;
	*r = t[1];
	return 0;
}

static void print_run(const char *name, const struct result *r,
		      const struct result *regular)
{
	printf("  %-17s %9.0f ns  x%-6.2f  encl ENCLU %.3f  AEX %.4f "
	       "(tick %.4f)\n", name, r->ns, r->ns / regular->ns,
	       r->enclave_enclu, r->aex, r->tick_aex);
}

int main(int argc, char **argv)
{
	char exe[PATH_MAX], cmd[16 * PATH_MAX], client[PATH_MAX + 64];
	long n = argc > 1 ? atol(argv[1]) : 100000;
	long m = argc > 2 ? atol(argv[2]) : 20000;
	double trap, floor, fs = 0, ecall = 1e30, ocall = 1e30;
	double sim_e = 1e30, sim_o = 1e30;
	struct sgxemu_trap_info ti;
	struct result r, re, ro, se, so, me, mse;
	const char *fsgs = sgxemu_fsgsbase_mode();
	FILE *la;

	if (n <= 0)
		n = 100000;
	if (m <= 0)
		m = 20000;
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* B is the directory above this program's (B/bench/oe_calls). */
	if (!realpath(argv[0], exe))
		give_up("cannot find this program's directory");
	snprintf(b, sizeof(b), "%s", dirname(dirname(exe)));
	snprintf(root, sizeof(root), "%s", b);
	dirname(root);
	snprintf(client, sizeof(client), "%s/../shared/clients", root);
	snprintf(cmd, sizeof(cmd), "%s/openenclave/setup.sh", client);
	if (access(cmd, X_OK))
		give_up("no Open Enclave client (../shared/clients/openenclave "
			"is absent)");
	snprintf(cmd, sizeof(cmd), "%s/intel-sdk/psw-urts-2.26.tar.xz", client);
	if (access(cmd, R_OK))
		give_up("no Intel PSW (../shared/clients/intel-sdk is absent): "
			"OE's host needs its libsgx_enclave_common.so.1");
	snprintf(out, sizeof(out), "%s/openenclave/bench", b);
	snprintf(psw, sizeof(psw), "%s/openenclave/psw/lib", b);
	snprintf(counts_file, sizeof(counts_file), "%s/counts", out);

	trap = sgxemu_trap_cost_ns(20000);
	if (trap <= 0 || sgxemu_trap_probe(&ti))
		give_up("the trap probe failed");
	if (strcmp(fsgs, "kernel"))
		fs = set_fs_ns();
	floor = trap + 2 * fs;

	/* OE and the PSW as test_openenclave.sh unpacks them, then ours. */
	snprintf(cmd, sizeof(cmd),
		 "{ [ -x '%s/openenclave/openenclave/bin/oesign' ] || "
		 "'%s/openenclave/setup.sh' '%s/openenclave' helloworld; } && "
		 "{ [ -e '%s/libsgx_enclave_common.so.1' ] || "
		 "{ tar -C '%s/openenclave' -xJf "
		 "'%s/intel-sdk/psw-urts-2.26.tar.xz' && rm -rf '%s/openenclave/psw' && "
		 "mv '%s/openenclave/psw-urts-2.26' '%s/openenclave/psw'; }; } && "
		 "'%s/bench/openenclave/build.sh' '%s/openenclave' '%s' "
		 ">/dev/null 2>&1",
		 b, client, b, psw, b, client, b, b, b, root, b, out);
	if (system(cmd))
		give_up("setting OE up or building bench/openenclave failed");

	la = fopen("/proc/loadavg", "r");
	if (la && fgets(cmd, 64, la))
		printf("oe_calls: load average before: %s", cmd);
	if (la)
		fclose(la);
	for (int round = 0; round < 3; round++) {
		if (run("regular", "ecall", n, 1, &r))
			give_up("the OE program failed under sgxemu run");
		if (r.ns < ecall)
			ecall = r.ns, re = r;
		if (run("regular", "ocall", n, 1, &r))
			give_up("the OE program failed under sgxemu run");
		if (r.ns < ocall)
			ocall = r.ns, ro = r;
		if (!run("simulate", "ecall", n, 1, &r) && r.ns < sim_e)
			sim_e = r.ns;
		if (!run("simulate", "ocall", n, 1, &r) && r.ns < sim_o)
			sim_o = r.ns;
	}
	if (sim_e > 1e29 || sim_o > 1e29)
		sim_e = sim_o = 0;	/* no simulation mode: the trap alone */
	printf("ENCLU trap round trip:  %8.0f ns (%s, median)\n", trap,
	       sgxemu_trap_name(ti.vector));
	if (fs > 0)
		printf("FSGSBASE: %s: 2 FS base writes per call forced, "
		       "%.0f ns each\n", fsgs, fs);
	else
		printf("FSGSBASE: kernel: no base write forced\n");
	printf("transition floor:       %8.0f ns (one trap%s: OE enters "
	       "through the vDSO, so a call's only trap is the EEXIT)\n",
	       floor, fs > 0 ? " + 2 FS writes" : "");
	printf("OE's own work per call: %8.0f ns ECALL, %.0f ns OCALL (the "
	       "same program in OE's simulation mode, no sgxemu, no ENCLU; "
	       "best of 3)\n", sim_e, sim_o);
	printf("OE empty ECALL:         %8.0f ns (best of 3 x %ld): %.2f x "
	       "(transition floor + OE's own, %.0f ns); %.2f x the transition "
	       "floor alone; per call: %.3f enclave ENCLU traps, %.3f host "
	       "ENCLU traps, %.3f trap-free EENTERs\n", ecall, n,
	       ecall / (floor + sim_e), floor + sim_e, ecall / floor,
	       re.enclave_enclu, re.host_enclu, re.fast_eenter);
	printf("OE empty OCALL:         %8.0f ns: %.2f x (transition floor + "
	       "OE's own, %.0f ns); %.2f x the transition floor alone; per "
	       "call: %.3f enclave ENCLU traps, %.3f host ENCLU traps, %.3f "
	       "trap-free EENTERs\n", ocall, ocall / (floor + sim_o),
	       floor + sim_o, ocall / floor, ro.enclave_enclu, ro.host_enclu,
	       ro.fast_eenter);

	/*
	 * Switchless against regular, four conditions, and the host's own
	 * hand-off (no enclave) in the same conditions. The busy loops are
	 * two more runnable threads, so the caller and the worker no longer
	 * have a CPU each, which OE's switchless design assumes.
	 */
	printf("switchless (1 host worker, 1 enclave worker) against regular, "
	       "%ld calls per run, the median of 3 runs per line; x = against "
	       "the regular call in the same conditions; per call: enclave ENCLU traps "
	       "(EEXITs: a switchless ECALL's count is its worker's sleeps), "
	       "AEXs (those of the tick):\n", m);
	for (int busy_on = 0; busy_on < 2; busy_on++)
		for (int tick = 1; tick >= 0; tick--) {
			double h, hs = 0;

			printf(" %s, AEX tick %s:\n",
			       busy_on ? "two busy loops beside" : "host as it is",
			       tick ? "on (4 ms)" : "off");
			busy_loops(busy_on);
			if (run3("regular", "ecall", m, tick, &re) ||
			    run3("switchless", "ecall", m, tick, &se) ||
			    run3("regular", "ocall", m, tick, &ro) ||
			    run3("switchless", "ocall", m, tick, &so)) {
				busy_loops(0);
				printf("  a run failed\n");
				continue;
			}
			/* OE's simulation mode: no sgxemu under it. */
			if (tick && (run3("simulate", "ecall", m / 4, 0, &me) ||
				     run3("simulate-switchless", "ecall", m / 4,
					  0, &mse))) {
				busy_loops(0);
				printf("  a simulation-mode run failed\n");
				continue;
			}
			h = handoff_ns(m, &hs);
			busy_loops(0);
			print_run("regular ECALL", &re, &re);
			print_run("switchless ECALL", &se, &re);
			print_run("regular OCALL", &ro, &ro);
			print_run("switchless OCALL", &so, &ro);
			if (tick)
				printf("  OE alone (its simulation mode, no "
				       "sgxemu, %ld calls): regular ECALL %.0f ns, "
				       "switchless ECALL %.0f ns, x%.2f\n", m / 4,
				       me.ns, mse.ns, mse.ns / me.ns);
			printf("  host hand-off     %9.0f ns  (two host threads, "
			       "OE's protocol, no enclave: the worker slept at "
			       "%.3f per call)\n", h, hs);
		}
	la = fopen("/proc/loadavg", "r");
	if (la && fgets(cmd, 64, la))
		printf("oe_calls: load average after: %s", cmd);
	if (la)
		fclose(la);
	printf("oe_calls_ocall ratio=%.2f target=1.3\n",
	       ocall / (floor + sim_o));
	printf("oe_calls ratio=%.2f target=1.3\n", ecall / (floor + sim_e));
	return 0;
}
