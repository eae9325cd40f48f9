/* SPDX-License-Identifier: MIT */
/*
 * bench/paging: EPC paging throughput of the processor model against the
 * AES-GCM it cannot avoid.
 *
 * Emulated: pages of an enclave written back and reloaded the way a
 * reclaimer does it, in batches of 16 (EBLOCK each page, one ETRACK per
 * batch, EWB each page into backing memory, then ELDU each page back).
 * Raw: AES-128-GCM (OpenSSL EVP) sealing and opening 4096 bytes with a
 * 128-byte header, the same work per page. Ratio = emulated pages/s / raw
 * pages/s; both measured in the same run, best of ROUNDS, interleaved.
 *
 * Then the whole system: the paging test enclave with a 32 MiB heap fills
 * every heap page and reads it back twice (tests/enclaves/paging_encl.*),
 * once with an 8 MiB EPC (4x oversubscribed: every page is evicted and
 * reloaded through #PF, AEX, ELDU, ERESUME several times) and once with an
 * EPC that holds it all; the slowdown is their ratio. Each runs in a
 * forked child, because the platform's EPC size is fixed per process.
 *
 * Last line, as for every benchmark: `paging ratio=R target=0.5`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpu/cpu.h"
#include "engine_bench.h"
#include "../tests/enclaves/paging_util.h"

#define PAGE		SGX_PAGE_SIZE
#define NR_PAGES	1024		/* 4 MiB of enclave, reused each round */
#define BATCH		16
#define ENCL_BASE	0x7e0000000000ULL
#define ENCL_SIZE	(8ULL << 20)
#define ROUNDS		5
#define TARGET		0.5

struct rig {
	struct sgx_cpu cpu;
	uint8_t *backing;
	struct sgx_pcmd *pcmd;
	long page_index[NR_PAGES];
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* SECS in EPC page 0, VA pages 1-2, enclave pages from 3 on. */
static int rig_init(struct rig *r)
{
	struct sgx_cpu_config cfg = { .epc_size = (NR_PAGES + 16) * PAGE };
	struct sgx_secinfo secinfo __attribute__((aligned(64))) = { 0 };
	struct sgx_pageinfo pi __attribute__((aligned(32))) = { 0 };
	struct sgx_secs *secs = aligned_alloc(PAGE, PAGE);
	uint8_t *src = aligned_alloc(PAGE, PAGE);
	int ret = -1;

	r->backing = aligned_alloc(PAGE, (size_t)NR_PAGES * PAGE);
	r->pcmd = aligned_alloc(128, NR_PAGES * sizeof(*r->pcmd));
	if (!secs || !src || !r->backing || !r->pcmd || sgx_cpu_init(&r->cpu, &cfg))
		goto out;
	memset(secs, 0, PAGE);
	secs->base = ENCL_BASE;
	secs->size = ENCL_SIZE;
	secs->ssa_frame_size = 1;
	secs->attributes.flags = SGX_ATTR_MODE64BIT;
	secs->attributes.xfrm = SGX_XFRM_LEGACY;
	secinfo.flags = SGX_SECINFO_SECS;
	pi.srcpge = (uintptr_t)secs;
	pi.secinfo = (uintptr_t)&secinfo;
	if (sgx_ecreate(&r->cpu, &pi, sgx_epc_page(&r->cpu, 0)) ||
	    sgx_epa(&r->cpu, SGX_PT_VA, sgx_epc_page(&r->cpu, 1)) ||
	    sgx_epa(&r->cpu, SGX_PT_VA, sgx_epc_page(&r->cpu, 2)))
		goto out;
	secinfo.flags = SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W;
	pi.secs = (uintptr_t)sgx_epc_page(&r->cpu, 0);
	for (int i = 0; i < NR_PAGES; i++) {
		memset(src, i, PAGE);
		pi.linaddr = ENCL_BASE + (uint64_t)i * PAGE;
		r->page_index[i] = 3 + i;
		if (sgx_eadd(&r->cpu, &pi, sgx_epc_page(&r->cpu, 3 + i)))
			goto out;
	}
	ret = 0;
out:
	free(secs);
	free(src);
	return ret;
}

static uint64_t *slot(struct rig *r, int i)
{
	return (uint64_t *)sgx_epc_page(&r->cpu, 1 + i / 512) + i % 512;
}

/* One round: every page out and back in. Seconds, or < 0 on error. */
static double round_emulated(struct rig *r)
{
	struct sgx_pageinfo pi __attribute__((aligned(32)));
	void *secs = sgx_epc_page(&r->cpu, 0);
	double t0 = now();

	for (int b = 0; b < NR_PAGES; b += BATCH) {
		for (int i = b; i < b + BATCH; i++)
			if (sgx_eblock(&r->cpu, sgx_epc_page(&r->cpu, r->page_index[i])))
				return -1;
		if (sgx_etrack(&r->cpu, secs))
			return -1;
		for (int i = b; i < b + BATCH; i++) {
			memset(&pi, 0, sizeof(pi));
			pi.srcpge = (uintptr_t)(r->backing + (size_t)i * PAGE);
			pi.secinfo = (uintptr_t)&r->pcmd[i];
			if (sgx_ewb(&r->cpu, &pi, sgx_epc_page(&r->cpu, r->page_index[i]),
				    slot(r, i)))
				return -1;
		}
	}
	for (int i = 0; i < NR_PAGES; i++) {
		memset(&pi, 0, sizeof(pi));
		pi.linaddr = ENCL_BASE + (uint64_t)i * PAGE;
		pi.srcpge = (uintptr_t)(r->backing + (size_t)i * PAGE);
		pi.secinfo = (uintptr_t)&r->pcmd[i];
		pi.secs = (uintptr_t)secs;
		if (sgx_eldu(&r->cpu, &pi, sgx_epc_page(&r->cpu, r->page_index[i]),
			     slot(r, i)))
			return -1;
	}
	return now() - t0;
}

/*
 * Raw AES-128-GCM, the cipher work EWB and ELDU cannot avoid (seal 4096
 * bytes with a 128-byte header, then open them), done the cheapest way
 * EVP allows: a context per direction, keyed once, a new IV per page.
 */
static double round_raw(EVP_CIPHER_CTX *enc, EVP_CIPHER_CTX *dec,
			uint8_t *plain, uint8_t *cipher)
{
	uint8_t hdr[128] = { 0 }, iv[12] = { 0 }, tag[16];
	double t0 = now();
	int len;

	for (int i = 0; i < NR_PAGES; i++) {
		memcpy(iv, &i, sizeof(i));
		if (!EVP_EncryptInit_ex(enc, NULL, NULL, NULL, iv) ||
		    !EVP_EncryptUpdate(enc, NULL, &len, hdr, sizeof(hdr)) ||
		    !EVP_EncryptUpdate(enc, cipher, &len, plain, PAGE) ||
		    !EVP_EncryptFinal_ex(enc, cipher + len, &len) ||
		    !EVP_CIPHER_CTX_ctrl(enc, EVP_CTRL_GCM_GET_TAG, 16, tag) ||
		    !EVP_DecryptInit_ex(dec, NULL, NULL, NULL, iv) ||
		    !EVP_DecryptUpdate(dec, NULL, &len, hdr, sizeof(hdr)) ||
		    !EVP_DecryptUpdate(dec, plain, &len, cipher, PAGE) ||
		    !EVP_CIPHER_CTX_ctrl(dec, EVP_CTRL_GCM_SET_TAG, 16, tag) ||
		    EVP_DecryptFinal_ex(dec, plain + len, &len) <= 0)
			return -1;
	}
	return now() - t0;
}

/* Fill + check of a 32 MiB heap with an EPC of @epc_mib: seconds, or < 0
 * (the enclave's checksum is verified). In a child process. */
struct counts {
	uint64_t evicted, reloaded, aging, kicks, ksgxd, direct;
};

static void counts_of(struct counts *c)
{
	struct sgxemu_platform_stats ps;

	memset(c, 0, sizeof(*c));
	if (sgxemu_platform_stats(&ps))
		return;
	c->evicted = ps.pages_evicted;
	c->reloaded = ps.pages_reloaded;
	c->aging = ps.aging_faults;
	c->kicks = ps.kicks;
	c->ksgxd = ps.reclaimer_runs;
	c->direct = ps.direct_reclaims;
}

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Seconds of wall time (and in *@cpu, of the calling thread's CPU time). */
static double workload(uint64_t epc_mib, struct counts *out, double *cpu)
{
	struct { double t, cpu; struct counts c; } res = { .t = -1 };
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct sgxemu_platform_config cfg = {
			.epc_size = epc_mib * MiB, .sgx2 = -1, .guard = -1,
			.host_enclu = -1,
		.aexnotify = -1,
		};
		struct counts c0;
		struct sgxemu_run run;
		struct pencl p;
		const char *why;
		uint64_t seed = 0x1234, n;
		double t0, c0t;

		close(fds[0]);
		sgxemu_platform_configure(&cfg);
		why = pload(&p, 32);
		if (why) {
			fprintf(stderr, "paging: load: %s\n", why);
			_exit(1);
		}
		n = p.heap_pages;
		counts_of(&c0);
		c0t = thread_cpu();
		t0 = now();
		if (tu_call(&run, p.base, P_FILL, 0, n, seed) ||
		    run.exit_reason != SGXEMU_EXIT_EEXIT ||
		    tu_call(&run, p.base, P_CHECK, 0, n, seed) ||
		    run.exit_reason != SGXEMU_EXIT_EEXIT)
			_exit(1);
		res.t = now() - t0;
		res.cpu = thread_cpu() - c0t;
		if (run.regs.rsi || run.regs.rdx != expected_checksum(seed, 0, n))
			_exit(1);
		counts_of(&res.c);
		res.c.evicted -= c0.evicted;
		res.c.reloaded -= c0.reloaded;
		res.c.aging -= c0.aging;
		res.c.kicks -= c0.kicks;
		res.c.ksgxd -= c0.ksgxd;
		res.c.direct -= c0.direct;
		if (write(fds[1], &res, sizeof(res)) != sizeof(res))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (pid < 0 || read(fds[0], &res, sizeof(res)) != sizeof(res))
		res.t = -1;
	close(fds[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	*out = res.c;
	*cpu = res.cpu;
	return res.t;
}

/*
 * Mapping one EPC page over the PROT_NONE placeholder with its page-table
 * entry (MAP_POPULATE), then the first read through it, as a reload does
 * and the resumed access after it: median ns. Under shadow paging the
 * first access after the populate is a fault of its own, in the
 * hypervisor.
 */
#define FLOOR_PAGES	512

static double map_touch_median(void)
{
	static uint64_t t[FLOOR_PAGES];
	int fd = memfd_create("paging-floor", MFD_CLOEXEC);
	uint8_t *ph, page[PAGE];
	volatile uint8_t sink = 0;
	double m = 0;

	memset(page, 1, sizeof(page));
	if (fd < 0 || ftruncate(fd, (off_t)FLOOR_PAGES * PAGE))
		goto out;
	for (int i = 0; i < FLOOR_PAGES; i++)
		if (pwrite(fd, page, PAGE, (off_t)i * PAGE) != PAGE)
			goto out;
	ph = mmap(NULL, 2 * FLOOR_PAGES * PAGE, PROT_NONE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (ph == MAP_FAILED)
		goto out;
	for (int i = 0; i < FLOOR_PAGES; i++) {
		/* Every other page, at scattered offsets: nothing merges. */
		uint8_t *va = ph + (size_t)i * 2 * PAGE;
		uint64_t t0 = now_ns();

		if (mmap(va, PAGE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd,
			 (off_t)((i * 7) % FLOOR_PAGES) * PAGE) == MAP_FAILED)
			break;
		sink += *(volatile uint8_t *)va;
		t[i] = now_ns() - t0;
	}
	m = (double)median(t, FLOOR_PAGES);
	munmap(ph, 2 * FLOOR_PAGES * PAGE);
out:
	if (fd >= 0)
		close(fd);
	(void)sink;
	return m;
}

/* pread of one backing page from a memfd: median ns. */
static double pread_median(void)
{
	static uint64_t t[FLOOR_PAGES];
	int fd = memfd_create("paging-floor", MFD_CLOEXEC);
	uint8_t page[PAGE];
	double m = 0;

	memset(page, 1, sizeof(page));
	if (fd < 0 || pwrite(fd, page, PAGE, 0) != PAGE)
		goto out;
	for (int i = 0; i < FLOOR_PAGES; i++) {
		uint64_t t0 = now_ns();

		if (pread(fd, page, PAGE, 0) != PAGE)
			break;
		t[i] = now_ns() - t0;
	}
	m = (double)median(t, FLOOR_PAGES);
out:
	if (fd >= 0)
		close(fd);
	return m;
}

/* The fault-in's enclave-thread CPU per reload (ns; 0 if not measured),
 * and this host's trap. */
static double fault_in_ns, trap_ns;

static void oversubscription(void)
{
	double over = 1e9, resident = 1e9, per, trap, cpu_o = 0, cpu_r = 0;
	struct counts c_over = { 0 }, c_res = { 0 }, co, cr;
	uint64_t ev_over, ev_res;

	/* The trap the engine takes for a fault, as in bench/ecall. */
	trap = sgxemu_trap_cost_ns(20000);

	for (int i = 0; i < 3; i++) {
		double oc, rc, o = workload(8, &co, &oc), r = workload(64, &cr, &rc);

		if (o < 0 || r < 0) {
			printf("paging: oversubscribed workload failed\n");
			return;
		}
		if (o < over) {
			over = o;
			c_over = co;
			cpu_o = oc;
		}
		if (r < resident) {
			resident = r;
			c_res = cr;
			cpu_r = rc;
		}
	}
	ev_over = c_over.evicted;
	ev_res = c_res.evicted;
	printf("paging: 32 MiB heap, fill + 2 reads, EPC 64 MiB (resident) "
	       "%8.3f s (%llu evictions)\n", resident,
	       (unsigned long long)ev_res);
	printf("paging: 32 MiB heap, fill + 2 reads, EPC 8 MiB (4x over)  "
	       "%8.3f s (%llu evictions)\n", over,
	       (unsigned long long)ev_over);
	printf("paging: 4x over: %llu reloads, %llu aging faults, %llu kicks, "
	       "%llu ksgxd and %llu direct reclaim batches\n",
	       (unsigned long long)c_over.reloaded,
	       (unsigned long long)c_over.aging,
	       (unsigned long long)c_over.kicks,
	       (unsigned long long)c_over.ksgxd,
	       (unsigned long long)c_over.direct);
	per = ev_over ? (over - resident) / (double)ev_over * 1e9 : 0.0;
	printf("paging: oversubscribed slowdown %.1fx (%.1f us per eviction "
	       "and reload)\n", over / resident, per / 1e3);
	if (trap > 0)
		printf("paging: per eviction and reload = %.2f traps of this "
		       "host's (%.2f us each; goal 3)\n", per / trap,
		       trap / 1e3);
	/* The enclave thread's own share: its CPU time per reload, the
	 * fault-in (trap, ELDU, mapping) and what the reclaimer's TLB
	 * shootdowns cost it, without ksgxd's work on the other CPU. */
	if (trap > 0 && c_over.reloaded) {
		fault_in_ns = (cpu_o - cpu_r) / (double)c_over.reloaded * 1e9;
		trap_ns = trap;
		printf("paging: fault-in, enclave thread CPU per reload: "
		       "%.1f us = %.2f traps\n", fault_in_ns / 1e3,
		       fault_in_ns / trap);
	}
}

/*
 * What one fault-in cannot do without on this host, each part measured
 * alone: the trap; the two FS writes around a handler in enclave mode
 * where FS is switched by system call; mapping the page and the resumed
 * access's first touch; the pread of its backing page; AES-GCM open (half
 * the raw seal + open). The rest of a fault-in is the emulator's own.
 */
static void host_floor(double raw_page_ns)
{
	double fs = fs_by_syscall() ? 2 * fs_write_median(20000) : 0;
	double map = map_touch_median(), rd = pread_median();
	double open = raw_page_ns / 2, floor = trap_ns + fs + map + rd + open;

	if (!fault_in_ns)
		return;
	printf("paging: fault-in floor of this host %.1f us = %.2f traps "
	       "(trap %.1f + FS writes %.1f + map and first touch %.1f + "
	       "pread %.1f + AES-GCM open %.1f); fault-in / floor = %.2f\n",
	       floor / 1e3, floor / trap_ns, trap_ns / 1e3, fs / 1e3,
	       map / 1e3, rd / 1e3, open / 1e3, fault_in_ns / floor);
}

int main(void)
{
	uint8_t *plain = aligned_alloc(PAGE, PAGE), *cipher = aligned_alloc(PAGE, PAGE);
	double best_emu = 1e9, best_raw = 1e9, ratio;
	static const uint8_t key[16] = { 1, 2, 3 };
	EVP_CIPHER_CTX *enc = EVP_CIPHER_CTX_new(), *dec = EVP_CIPHER_CTX_new();
	struct rig r;

	if (!enc || !dec || !plain || !cipher || rig_init(&r) ||
	    !EVP_EncryptInit_ex(enc, EVP_aes_128_gcm(), NULL, key, NULL) ||
	    !EVP_DecryptInit_ex(dec, EVP_aes_128_gcm(), NULL, key, NULL)) {
		fprintf(stderr, "paging: setup failed\n");
		return 1;
	}
	memset(plain, 0x5a, PAGE);
	for (int i = 0; i < ROUNDS; i++) {
		double e = round_emulated(&r), w = round_raw(enc, dec, plain, cipher);

		if (e < 0 || w < 0) {
			fprintf(stderr, "paging: a leaf failed in round %d\n", i);
			return 1;
		}
		if (e < best_emu)
			best_emu = e;
		if (w < best_raw)
			best_raw = w;
	}
	ratio = best_raw / best_emu;
	oversubscription();
	printf("paging: EBLOCK+ETRACK/16+EWB+ELDU   %10.0f pages/s (%.2f us/page)\n",
	       NR_PAGES / best_emu, best_emu / NR_PAGES * 1e6);
	printf("paging: raw AES-128-GCM seal+open   %10.0f pages/s (%.2f us/page)\n",
	       NR_PAGES / best_raw, best_raw / NR_PAGES * 1e6);
	host_floor(best_raw / NR_PAGES * 1e9);
	printf("paging ratio=%.2f target=%.1f\n", ratio, TARGET);
	sgx_cpu_destroy(&r.cpu);
	free(r.backing);
	free(r.pcmd);
	EVP_CIPHER_CTX_free(enc);
	EVP_CIPHER_CTX_free(dec);
	free(plain);
	free(cipher);
	return 0;
}
