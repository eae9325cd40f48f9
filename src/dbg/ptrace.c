/* SPDX-License-Identifier: MIT */
/*
 * libsgxemu_ptrace.so: the Linux SGX driver's debugger-access hook
 * (linux-driver-facts.md §8.4, sgx_vma_access), run on the debugger's side.
 *
 * Preloaded into the debugger (`sgxemu gdb` does it), never into the
 * debugged program. On Linux, ptrace PEEK/POKE and /proc/PID/mem reach an
 * enclave VMA through the driver's hook: only enclaves with
 * ATTRIBUTES.DEBUG, word by word through EDBGRD/EDBGWR, whatever the page
 * protections (so a debugger can write a breakpoint into code). Under
 * sgxemu the host kernel sees ELRANGE as shared mappings of the EPC memfd
 * with EPCM AND VMA protections: it would refuse a debugger's write to a
 * code page (EIO: no forced write to a shared read-only mapping) and let it
 * read any enclave. The host kernel cannot be changed, so the debugger's
 * calls are:
 *  - ptrace(PTRACE_PEEK/POKE{TEXT,DATA}) and pread/pwrite on a
 *    /proc/PID[/task/TID]/mem descriptor, for addresses inside an
 *    enclave of a process that published itself (src/engine/debugger.c),
 *    carried out here with the hook's rules, the EDBGRD/EDBGWR checks
 *    being the processor model's own (sgx_edbg_rules), on the processor's
 *    own read-write mapping of the EPC page in that process: the enclave's
 *    mapping keeps its permissions, so a breakpoint in an R-X page does
 *    not make it writable for enclave code;
 *  - everything else passed to the real functions unchanged, and an
 *    access that spans an enclave and other memory split at the boundary,
 *    as the kernel splits it at VMA boundaries.
 * What the user-visible errno is follows the kernel: the hook's EFAULT and
 * EIO both reach ptrace and /proc/PID/mem as EIO; a /proc/PID/mem access
 * returns the bytes of the pages done before the failing one.
 *
 * An evicted page (EPC paging) is accessed as the kernel's hook reloads it
 * first: its backing page opened with the paging key and its VA slot's
 * version, as ELDU does, and after a write sealed again under that
 * version (evicted_put), without making it resident (the debugged
 * process, which would do that, is stopped). Not done here
 * (docs/guide.md, "Debugging enclaves"): the hook's VMA-permission check
 * (§8.1 step 3.2).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <unistd.h>

#include <elf.h>
#include <link.h>
#include <sys/mman.h>

#include "cpu/cpu.h"
#include "cpu/paging.h"
#include "driver/paging.h"
#include "engine/debugger.h"

/* Loaded after the debugger started (sgxemu.gdb's dlopen), not preloaded. */
static bool got_patched;

/*
 * The functions these stand in front of: the next definition after this
 * library when it is preloaded, the first one in the process (libc's, or
 * a library preloaded before, such as the SDK's libsgx_ptrace.so) when it
 * was loaded later and patched the debugger's own calls (got_patch()).
 */
static void *next_fn(const char *name)
{
	return dlsym(got_patched ? RTLD_DEFAULT : RTLD_NEXT, name);
}

static ssize_t real_pread(int fd, void *buf, size_t n, off_t off)
{
	static ssize_t (*fn)(int, void *, size_t, off_t);

	if (!fn)
		fn = (ssize_t (*)(int, void *, size_t, off_t))next_fn("pread64");
	return fn(fd, buf, n, off);
}

static ssize_t real_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	static ssize_t (*fn)(int, const void *, size_t, off_t);

	if (!fn)
		fn = (ssize_t (*)(int, const void *, size_t, off_t))next_fn("pwrite64");
	return fn(fd, buf, n, off);
}

static long real_ptrace(int req, pid_t pid, void *addr, void *data)
{
	static long (*fn)(int, ...);

	if (!fn)
		fn = (long (*)(int, ...))next_fn("ptrace");
	return fn(req, pid, addr, data);
}

/* Exactly @n bytes of the tracee at @addr through its mem file. */
static bool tracee_read(int fd, uint64_t addr, void *buf, size_t n)
{
	return addr <= (uint64_t)INT64_MAX &&
	       real_pread(fd, buf, n, (off_t)addr) == (ssize_t)n;
}

static bool tracee_write(int fd, uint64_t addr, const void *buf, size_t n)
{
	return real_pwrite(fd, buf, n, (off_t)addr) == (ssize_t)n;
}

/*
 * Where @pid published its processor: the start of its
 * "/memfd:sgxemu-debug" mapping, 0 if it has none (not under sgxemu, or
 * no enclave device used yet). A few entries are remembered; the
 * magic is checked at every use, so an exec or a new process of the same
 * id is noticed.
 */
static uint64_t find_desc(pid_t pid, bool refresh)
{
	/* A few processes (or thread ids) at once: gdb reads through each
	 * thread's own mem file, and parsing maps costs far more than the
	 * access itself. */
	static struct { pid_t pid; uint64_t desc; } cache[64];
	size_t slot = (size_t)pid % (sizeof(cache) / sizeof(cache[0]));
	char path[64], line[512];
	uint64_t found = 0;
	FILE *f;

	if (cache[slot].pid == pid && cache[slot].desc && !refresh)
		return cache[slot].desc;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo;

		if (strstr(line, "/memfd:" SGXEMU_DEBUG_MEMFD " ") &&
		    sscanf(line, "%llx-", &lo) == 1) {
			found = lo;
			break;
		}
	}
	fclose(f);
	cache[slot].pid = pid;
	cache[slot].desc = found;
	return found;
}

/* What the hook needs of one enclave, read from the tracee. */
struct encl_view {
	uint64_t base, size;
	uint64_t ctl, eid;	/* tracee address of the sgx_encl_ctl; EID */
	struct sgxemu_debug_desc d;
	uint8_t  paging_key[16];
	uint64_t pages;		/* tracee address of ctl->pages */
	uint64_t attributes;	/* SECS.ATTRIBUTES.FLAGS */
	uint64_t epc, epcm;	/* tracee addresses of the EPC and EPCM */
	size_t   nr_pages;
};

struct evicted;
static int evicted_page(int fd, const struct encl_view *v, size_t page,
			uint8_t plain[SGX_PAGE_SIZE], struct sgx_epcm_entry *m,
			struct evicted *ev);

/*
 * The processor of the tracee and the enclave holding @addr: 1 with @v
 * filled in; 0 if @addr is in no enclave, with *next the lowest enclave
 * base above it (or ~0); -1 if the tracee published nothing usable.
 */
static int find_enclave_d(int fd, pid_t pid, uint64_t addr,
			  struct encl_view *v, uint64_t *next,
			  struct sgxemu_debug_desc *dp)
{
	struct sgxemu_debug_desc d;
	struct sgx_cpu cpu;
	struct sgx_encl_ctl ctl;
	uint64_t at, desc = find_desc(pid, false);
	int guard = 0;

	*next = ~0ULL;
	if (desc && (!tracee_read(fd, desc, &d, sizeof(d)) ||
		     memcmp(d.magic, SGXEMU_DEBUG_MAGIC, sizeof(d.magic))))
		desc = find_desc(pid, true);	/* exec'd, or another process */
	if (!desc || !tracee_read(fd, desc, &d, sizeof(d)) ||
	    memcmp(d.magic, SGXEMU_DEBUG_MAGIC, sizeof(d.magic)) ||
	    d.version != SGXEMU_DEBUG_VERSION ||
	    d.cpu_size != sizeof(struct sgx_cpu) ||
	    d.epcm_size != sizeof(struct sgx_epcm_entry) ||
	    d.ctl_size != sizeof(struct sgx_encl_ctl) ||
	    !tracee_read(fd, d.cpu, &cpu, sizeof(cpu)))
		return -1;
	if (dp)
		*dp = d;
	/* The list is the processor's (cpu->enclaves); bounded, since a
	 * running tracee may be changing it under us. */
	for (at = (uint64_t)(uintptr_t)cpu.enclaves; at && guard < 65536;
	     at = (uint64_t)(uintptr_t)ctl.next, guard++) {
		if (!tracee_read(fd, at, &ctl, sizeof(ctl)))
			return -1;
		if (addr >= ctl.base && addr - ctl.base < ctl.size) {
			uint64_t secs = (uint64_t)(uintptr_t)cpu.epc +
					((uint64_t)ctl.secs_index << SGX_PAGE_SHIFT);

			v->base = ctl.base;
			v->size = ctl.size;
			v->ctl = at;
			v->eid = ctl.eid;
			v->d = d;
			memcpy(v->paging_key, cpu.paging_key, sizeof(v->paging_key));
			v->pages = (uint64_t)(uintptr_t)ctl.pages;
			v->epc = (uint64_t)(uintptr_t)cpu.epc;
			v->epcm = (uint64_t)(uintptr_t)cpu.epcm;
			v->nr_pages = cpu.nr_pages;
			if (ctl.secs_evicted) {
				/* Written back: its contents are in backing. */
				static uint8_t page[SGX_PAGE_SIZE];
				struct sgx_epcm_entry m;

				if (evicted_page(fd, v, ctl.size >> SGX_PAGE_SHIFT,
						 page, &m, NULL))
					return -1;
				memcpy(&v->attributes, page +
				       offsetof(struct sgx_secs, attributes.flags),
				       sizeof(v->attributes));
			} else if (!tracee_read(fd, secs + offsetof(struct sgx_secs,
								    attributes.flags),
						&v->attributes, sizeof(v->attributes))) {
				return -1;
			}
			return 1;
		}
		if (ctl.base > addr && ctl.base < *next)
			*next = ctl.base;
	}
	return 0;
}

static int find_enclave(int fd, pid_t pid, uint64_t addr, struct encl_view *v,
			uint64_t *next)
{
	return find_enclave_d(fd, pid, addr, v, next, NULL);
}

/*
 * The contents and EPCM state of the evicted page @page of enclave @v
 * (the SECS at ELRANGE's page count), as ELDU would load them (eldu.c):
 * the engine's enclave whose ctl is @v's, its paging state, the VA
 * slot's version, the PCMD and the encrypted page. 0, or -EFAULT (not
 * evicted, or its MAC does not hold: the kernel's reload fails with
 * EFAULT then). @ev, if given, keeps what evicted_put() needs.
 */
struct evicted {
	struct sgx_paging_header hdr;
	uint64_t version;
	uint64_t cipher_at, pcmd_at;	/* tracee addresses */
};

static int evicted_page(int fd, const struct encl_view *v, size_t page,
			uint8_t plain[SGX_PAGE_SIZE], struct sgx_epcm_entry *m,
			struct evicted *ev)
{
	static uint8_t cipher[SGX_PAGE_SIZE];
	struct sgx_paging_header hdr;
	struct sgxemu_enclave e;
	struct sgxemu_paging pg;
	struct sgx_pcmd pcmd;
	uint64_t p = 0, version, flags;
	uint32_t i, slot;
	uint8_t state;
	long va;

	if (v->d.encl_size != sizeof(e) || !v->d.enclaves)
		return -EFAULT;
	for (i = 0; i < v->d.max_enclaves; i++) {
		if (!tracee_read(fd, v->d.enclaves + i * sizeof(p), &p, sizeof(p)))
			return -EFAULT;
		if (p && tracee_read(fd, p, &e, sizeof(e)) &&
		    (uint64_t)(uintptr_t)e.ctl == v->ctl)
			break;
	}
	if (i == v->d.max_enclaves || !e.pg || page > e.npages ||
	    !tracee_read(fd, (uint64_t)(uintptr_t)e.pg, &pg, sizeof(pg)))
		return -EFAULT;
	/* page == npages: the SECS (paging.h), its own slot. */
	if (page == e.npages) {
		state = pg.secs_evicted ? PS_EVICTED : 0;
		slot = pg.secs_slot;
	} else if (!tracee_read(fd, (uint64_t)(uintptr_t)pg.state + page,
				&state, 1) ||
		   !tracee_read(fd, (uint64_t)(uintptr_t)pg.slot +
				page * sizeof(slot), &slot, sizeof(slot))) {
		return -EFAULT;
	}
	if (!(state & PS_EVICTED) || !slot ||
	    (slot - 1) / SGX_VA_SLOT_COUNT >= pg.nr_va ||
	    !tracee_read(fd, (uint64_t)(uintptr_t)pg.va +
			 (slot - 1) / SGX_VA_SLOT_COUNT * sizeof(va),
			 &va, sizeof(va)) ||
	    !tracee_read(fd, v->epc + ((uint64_t)va << SGX_PAGE_SHIFT) +
			 (slot - 1) % SGX_VA_SLOT_COUNT * sizeof(version),
			 &version, sizeof(version)) ||
	    !tracee_read(fd, (uint64_t)(uintptr_t)pg.pcmd + page * sizeof(pcmd),
			 &pcmd, sizeof(pcmd)) ||
	    !tracee_read(fd, (uint64_t)(uintptr_t)pg.backing +
			 page * SGX_PAGE_SIZE, cipher, sizeof(cipher)))
		return -EFAULT;
	memset(&hdr, 0, sizeof(hdr));
	hdr.flags = flags = pcmd.secinfo.flags;
	hdr.enclave_id = pcmd.enclave_id;
	if (page < e.npages) {	/* EWB binds a child page to its enclave */
		hdr.linaddr = v->base + (page << SGX_PAGE_SHIFT);
		hdr.eid = v->eid;
	}
	if (!version || sgx_page_open(v->paging_key, version, &hdr, cipher,
				      plain, pcmd.mac))
		return -EFAULT;
	if (ev) {
		ev->hdr = hdr;
		ev->version = version;
		ev->cipher_at = (uint64_t)(uintptr_t)pg.backing +
				page * SGX_PAGE_SIZE;
		ev->pcmd_at = (uint64_t)(uintptr_t)pg.pcmd + page * sizeof(pcmd) +
			      offsetof(struct sgx_pcmd, mac);
	}
	memset(m, 0, sizeof(*m));
	m->valid = 1;
	m->page_type = (uint8_t)((flags & SGX_SECINFO_PT_MASK) >>
				 SGX_SECINFO_PT_SHIFT);
	m->pending = !!(flags & SGX_SECINFO_PENDING);
	m->modified = !!(flags & SGX_SECINFO_MODIFIED);
	return 0;
}

/*
 * A debugger's write into an evicted page: the kernel reloads it, EDBGWR
 * writes, and a later EWB seals the new contents under a new version.
 * The stopped process cannot reload, so the page is sealed again here
 * under the version its VA slot holds (what ELDU checks), its MAC put in
 * its PCMD. 0 or -EIO.
 */
static int evicted_put(int fd, const struct encl_view *v,
		       const struct evicted *ev, const uint8_t *plain)
{
	static uint8_t cipher[SGX_PAGE_SIZE];
	uint8_t mac[16];

	if (sgx_page_seal(v->paging_key, ev->version, &ev->hdr, plain, cipher,
			  mac) ||
	    !tracee_write(fd, ev->cipher_at, cipher, sizeof(cipher)) ||
	    !tracee_write(fd, ev->pcmd_at, mac, sizeof(mac)))
		return -EIO;
	return 0;
}

/*
 * The hook on [addr, addr + len), which lies in one page of enclave @v:
 * 0 or -errno, all or nothing, as sgx_vma_access.
 */
static int hook_page(int fd, const struct encl_view *v, uint64_t addr,
		     uint8_t *buf, size_t len, bool write)
{
	static uint8_t evicted[SGX_PAGE_SIZE];
	struct evicted ev;
	struct sgx_epcm_entry m;
	uint64_t epc_page = 0;
	uint32_t idx;
	size_t done = 0;
	bool out = false;

	if (!(v->attributes & SGX_ATTR_DEBUG))
		return -EFAULT;
	if (!tracee_read(fd, v->pages + ((addr - v->base) >> SGX_PAGE_SHIFT) *
			 sizeof(uint32_t), &idx, sizeof(idx)) || idx > v->nr_pages)
		return -EFAULT;
	if (!idx) {
		/* No EPC page: none at all, or one evicted. */
		if (evicted_page(fd, v, (addr - v->base) >> SGX_PAGE_SHIFT,
				 evicted, &m, &ev))
			return -EFAULT;
		out = true;
	} else if (!tracee_read(fd, v->epcm + (uint64_t)(idx - 1) * sizeof(m),
				&m, sizeof(m))) {
		return -EFAULT;
	} else {
		epc_page = v->epc + ((uint64_t)(idx - 1) << SGX_PAGE_SHIFT);
	}
	while (done < len) {
		uint64_t a = addr + done, off = a & (SGX_PAGE_SIZE - 1) & ~7ULL;
		size_t in = a & 7, n = len - done < 8 - in ? len - done : 8 - in;
		uint64_t word;
		int r = sgx_edbg_rules(&m, v->attributes, off, false);

		/* PAGE_NOT_DEBUGGABLE is invisible to the kernel (§0.4):
		 * the read "succeeds" with whatever RBX held, here 0, and a
		 * write is not done. */
		if (r == SGX_PAGE_NOT_DEBUGGABLE) {
			if (!write)
				memset(buf + done, 0, n);
			done += n;
			continue;
		}
		if (r)
			return -EIO;
		if (out)
			memcpy(&word, evicted + off, sizeof(word));
		else if (!tracee_read(fd, epc_page + off, &word, sizeof(word)))
			return -EIO;
		if (write) {
			if (sgx_edbg_rules(&m, v->attributes, off, true))
				return -EIO;
			memcpy((uint8_t *)&word + in, buf + done, n);
			if (out)
				memcpy(evicted + off, &word, sizeof(word));
			else if (!tracee_write(fd, epc_page + off, &word,
					       sizeof(word)))
				return -EIO;
		} else {
			memcpy(buf + done, (uint8_t *)&word + in, n);
		}
		done += n;
	}
	return out && write ? evicted_put(fd, v, &ev, evicted) : 0;
}

/*
 * /proc/PID/mem semantics over [addr, addr + len): enclave parts through
 * the hook a page at a time, the rest through the real call; the bytes
 * done before the first failure, or -1 with errno (EIO for the hook's
 * refusals, as the kernel's mem_rw turns them). -2: @pid has published
 * nothing, the caller does the whole access itself.
 */
static ssize_t mem_access(int fd, pid_t pid, uint64_t addr, uint8_t *buf,
			  size_t len, bool write)
{
	size_t done = 0;
	int err = 0;

	while (done < len) {
		uint64_t a = addr + done, next;
		struct encl_view v;
		int in = find_enclave(fd, pid, a, &v, &next);
		size_t n = len - done;

		if (in < 0) {
			if (!done)
				return -2;
			in = 0;
			next = ~0ULL;
		}
		if (in) {
			uint64_t end = (a | (SGX_PAGE_SIZE - 1)) + 1;

			if (n > end - a)
				n = end - a;
			if (hook_page(fd, &v, a, buf + done, n, write)) {
				err = EIO;
				break;
			}
		} else {
			ssize_t r;

			if (next != ~0ULL && n > next - a)
				n = next - a;
			r = write ? real_pwrite(fd, buf + done, n, (off_t)a) :
				    real_pread(fd, buf + done, n, (off_t)a);
			if (r <= 0) {
				err = r < 0 ? errno : 0;
				break;
			}
			if ((size_t)r < n) {
				done += (size_t)r;
				break;
			}
		}
		done += n;
	}
	if (!done && err) {
		errno = err;
		return -1;
	}
	return (ssize_t)done;
}

/* The process whose memory @fd is (/proc/PID/mem, /proc/PID/task/TID/mem),
 * or 0. */
static pid_t mem_fd_pid(int fd)
{
	char link[64], target[128];
	ssize_t n;
	int pid, tid, end = 0;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return 0;
	target[n] = 0;
	if (sscanf(target, "/proc/%d/mem%n", &pid, &end) == 1 && end == n)
		return pid;
	end = 0;
	/* A thread's mem file is its process's memory. */
	if (sscanf(target, "/proc/%d/task/%d/mem%n", &pid, &tid, &end) == 2 &&
	    end == n)
		return pid;
	return 0;
}

static ssize_t rw_hooked(int fd, void *buf, size_t n, off_t off, bool write)
{
	pid_t pid = mem_fd_pid(fd);
	ssize_t r;

	if (!pid || off < 0)
		return -2;
	r = mem_access(fd, pid, (uint64_t)off, buf, n, write);
	if (getenv("SGXEMU_PTRACE_TRACE"))
		fprintf(stderr, "[ptrace.so %s pid %d %#llx+%zu -> %zd]\n",
			write ? "W" : "R", pid, (unsigned long long)off, n, r);
	return r;
}

/* Exported under both names; called directly, never through the PLT,
 * which would find libc's first where this library was loaded late. */
static ssize_t hook_pread(int fd, void *buf, size_t n, off_t off)
{
	ssize_t r = rw_hooked(fd, buf, n, off, false);

	return r == -2 ? real_pread(fd, buf, n, off) : r;
}

static ssize_t hook_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	ssize_t r = rw_hooked(fd, (void *)buf, n, off, true);

	return r == -2 ? real_pwrite(fd, buf, n, off) : r;
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
	return hook_pread(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
	return hook_pwrite(fd, buf, n, off);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	return hook_pread(fd, buf, n, off);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	return hook_pwrite(fd, buf, n, off);
}

/*
 * PEEK/POKE of one word: the kernel's ptrace_access_vm, which wants the
 * whole word (anything short is EIO).
 */
static int peek_poke(pid_t pid, bool write, uint64_t addr, long *word)
{
	char path[64];
	ssize_t r;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -2;
	r = mem_access(fd, pid, addr, (uint8_t *)word, sizeof(*word), write);
	err = errno;
	close(fd);
	if (r == -2)
		return -2;
	if (r != (ssize_t)sizeof(*word))
		return r < 0 && err != EIO ? -err : -EIO;
	return 0;
}

/*
 * The FS base libthread_db should see for thread @tid whose real one is
 * @fs: the host's saved in its control block while it is stopped in
 * enclave mode (debugger.h), else @fs.
 */
static uint64_t host_fs_of(pid_t tid, uint64_t fs)
{
	struct sgxemu_debug_desc d;
	struct encl_view v;
	uint64_t next;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fs;
	if (find_enclave_d(fd, tid, fs, &v, &next, &d) == 1 && d.tcb_base) {
		for (uint32_t i = 0; i < d.nr_slots; i++) {
			uint64_t tcb = d.tcb_base + (uint64_t)i * d.slot_size;
			uint64_t host = 0;
			int t = 0;

			if (tracee_read(fd, tcb + d.tcb_tid_off, &t, sizeof(t)) &&
			    t == tid &&
			    tracee_read(fd, tcb + d.tcb_host_fs_off, &host,
					sizeof(host)) && host) {
				fs = host;
				break;
			}
		}
	}
	close(fd);
	return fs;
}

long ptrace(enum __ptrace_request req, ...)
{
	va_list ap;
	pid_t pid;
	void *addr, *data;
	long word;
	bool poke;
	int r;

	va_start(ap, req);
	pid = va_arg(ap, pid_t);
	addr = va_arg(ap, void *);
	data = va_arg(ap, void *);
	va_end(ap);
	switch ((int)req) {
	case PTRACE_PEEKTEXT:
	case PTRACE_PEEKDATA:
	case PTRACE_POKETEXT:
	case PTRACE_POKEDATA:
		poke = req == PTRACE_POKETEXT || req == PTRACE_POKEDATA;
		word = poke ? (long)(uintptr_t)data : 0;
		r = peek_poke(pid, poke, (uint64_t)(uintptr_t)addr, &word);
		if (r == -2)
			break;
		if (r) {
			errno = -r;
			return -1;
		}
		errno = 0;	/* glibc's PEEK contract: -1 may be data */
		return poke ? 0 : word;
	case PTRACE_PEEKUSER:
		if ((uintptr_t)addr == offsetof(struct user_regs_struct, fs_base)) {
			long fs = real_ptrace((int)req, pid, addr, data);

			if (errno)
				return fs;
			fs = (long)host_fs_of(pid, (uint64_t)fs);
			errno = 0;
			return fs;
		}
		break;
	default:
		break;
	}
	/* glibc's own ptrace passes a word of its own for PEEK results. */
	return real_ptrace((int)req, pid, addr, data);
}

/*
 * For gdb only: drop this library from LD_PRELOAD before gdb copies its
 * environment for the programs it starts (sgxemu gdb sets theirs through
 * exec-wrapper).
 */
__attribute__((constructor)) static void unpreload(void)
{
	const char *pre = getenv("LD_PRELOAD");
	char *copy, *out, *tok, *save = NULL;

	if (!pre || !strstr(pre, "libsgxemu_ptrace.so"))
		return;
	copy = strdup(pre);
	out = calloc(1, strlen(pre) + 1);
	if (!copy || !out) {
		free(copy);
		free(out);
		return;
	}
	for (tok = strtok_r(copy, ": ", &save); tok;
	     tok = strtok_r(NULL, ": ", &save)) {
		if (strstr(tok, "libsgxemu_ptrace.so"))
			continue;
		if (*out)
			strcat(out, ":");
		strcat(out, tok);
	}
	if (*out)
		setenv("LD_PRELOAD", out, 1);
	else
		unsetenv("LD_PRELOAD");
	free(copy);
	free(out);
}

/*
 * Loaded into a debugger that did not preload it (sgxemu.gdb dlopen()s it,
 * for `sgx-gdb -x sgxemu.gdb`, whose script preloads the SDK's own
 * libsgx_ptrace.so instead, or for plain `gdb -x sgxemu.gdb`): a library
 * loaded late is never found before libc, so the debugger's own calls of
 * these functions are redirected here by rewriting its GOT entries for
 * them (the main program's PLT relocations). What they pointed at before
 * is found again as the first definition in the process (next_fn()).
 */
static const char *const hooked[] = {
	"pread64", "pwrite64", "pread", "pwrite", "ptrace",
};

static int got_patch_main(struct dl_phdr_info *info, size_t size, void *self)
{
	const Elf64_Sym *symtab = NULL;
	const char *strtab = NULL;
	const Elf64_Rela *rel[2] = { NULL, NULL };
	size_t relsz[2] = { 0, 0 };
	const Elf64_Dyn *dyn = NULL;
	uintptr_t base = info->dlpi_addr;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const Elf64_Dyn *)(base + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return 1;
	/* ld.so has made these pointers absolute in the main program's
	 * dynamic section on x86-64; a relative one gets the base added. */
#define DYNPTR(v) ((uintptr_t)(v) < base ? base + (uintptr_t)(v) : (uintptr_t)(v))
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB: symtab = (const void *)DYNPTR(dyn->d_un.d_ptr); break;
		case DT_STRTAB: strtab = (const void *)DYNPTR(dyn->d_un.d_ptr); break;
		case DT_JMPREL: rel[0] = (const void *)DYNPTR(dyn->d_un.d_ptr); break;
		case DT_PLTRELSZ: relsz[0] = dyn->d_un.d_val; break;
		case DT_RELA: rel[1] = (const void *)DYNPTR(dyn->d_un.d_ptr); break;
		case DT_RELASZ: relsz[1] = dyn->d_un.d_val; break;
		default: break;
		}
	}
#undef DYNPTR
	if (!symtab || !strtab)
		return 1;
	for (int t = 0; t < 2; t++) {
		for (size_t k = 0; rel[t] && k < relsz[t] / sizeof(Elf64_Rela); k++) {
			const Elf64_Rela *r = &rel[t][k];
			uint32_t type = ELF64_R_TYPE(r->r_info);
			const char *name;
			void **slot, *mine;
			uintptr_t page;

			if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
				continue;
			name = strtab + symtab[ELF64_R_SYM(r->r_info)].st_name;
			for (size_t h = 0; h < sizeof(hooked) / sizeof(hooked[0]); h++) {
				if (strcmp(name, hooked[h]))
					continue;
				mine = dlsym(self, name);
				slot = (void **)(base + r->r_offset);
				page = (uintptr_t)slot & ~(uintptr_t)4095;
				if (!mine || *slot == mine ||
				    mprotect((void *)page, 4096, PROT_READ | PROT_WRITE))
					continue;
				*slot = mine;
				got_patched = true;
			}
		}
	}
	return 1;	/* the main program only: the first entry */
}

__attribute__((constructor)) static void got_patch(void)
{
	Dl_info di;
	void *self;

	if (!dladdr((void *)got_patch, &di) || !di.dli_fname)
		return;
	self = dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD);
	if (!self)
		return;
	/* Preloaded: the debugger's calls find this library first anyway. */
	if (dlsym(RTLD_DEFAULT, "pread64") != dlsym(self, "pread64"))
		dl_iterate_phdr(got_patch_main, self);
	dlclose(self);
}
