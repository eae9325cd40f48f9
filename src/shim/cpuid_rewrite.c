/* SPDX-License-Identifier: MIT */
/*
 * CPUID without CPUID faulting (AMD hosts, or SGXEMU_CPUID=rewrite): every
 * CPUID instruction of the program's executable mappings becomes UD2, so
 * it traps (SIGILL) into sgxemu__cpuid_trap, which answers as the emulated
 * part (engine/cpuid.h).
 *
 * Finding them: 0f a2 also occurs inside other instructions and in data,
 * so instructions are decoded (Zydis), each function from its first byte
 * to its last. Function boundaries come from the ELF file on disk: the
 * .eh_frame FDEs (present in stripped objects: x86-64 code has unwind
 * tables by default) and the sized function symbols of .symtab and
 * .dynsym. A function whose decoding hits an invalid instruction, or does
 * not end exactly at its last byte, is left alone, so is a CPUID that
 * another clean function covering the same bytes does not see (a symbol
 * starting inside an instruction), and so is code no
 * function covers (hand-written tables, JIT code, objects without unwind
 * information): those CPUIDs run natively and --debug says so, once per
 * object. A byte search only skips functions that cannot hold a CPUID;
 * the decoder decides.
 *
 * Rewriting: CPUID is 0f a2 and UD2 is 0f 0b, so one byte changes; a
 * single-byte store is atomic, so a thread running the code meanwhile
 * executes one or the other, never a torn instruction. The address is
 * recorded before the store. The store goes through /proc/self/mem (the
 * kernel's copy-on-write of the private text page, no protection change),
 * else through a short mprotect.
 *
 * When: at start-up (the program and its libraries), after dlopen and
 * dlmopen (their constructors have then already run natively), and after
 * a file is mapped or made executable with PROT_EXEC. dlclose forgets the
 * sites of objects that are gone. Enclave memory is never touched (its
 * mappings are the driver's memfd, not files).
 */
#include <errno.h>
#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <Zydis/Zydis.h>

#include "engine/cpuid.h"
#include "shim/shim.h"

/* One ELF object seen in /proc/self/maps, scanned once. */
struct rw_obj {
	dev_t dev;
	ino_t ino;
	uintptr_t bias;		/* mapping start - file offset */
	uintptr_t lo, hi;	/* its executable mappings */
	bool seen;		/* in the latest maps read */
	uintptr_t *sites;	/* its rewritten CPUIDs */
	size_t nr_sites, cap_sites;
};

static struct rw_obj *objs;
static size_t nr_objs, cap_objs;
static pthread_mutex_t rw_lock = PTHREAD_MUTEX_INITIALIZER;

/* An executable mapping from /proc/self/maps. */
struct rw_map {
	uintptr_t start, end;
	uint64_t off;
	dev_t dev;
	ino_t ino;
	int prot;		/* PROT_* of the mapping */
	const char *path;
};

struct range {
	uint64_t lo, hi;	/* [lo, hi), ELF virtual addresses */
};

struct scan_stats {
	size_t rewritten, unclean, disagree, outside, failed;
};

/* An executable section that holds 0f a2 pairs, and where it is mapped. */
struct xsec {
	uint64_t addr, size;	/* ELF virtual address, bytes */
	const uint8_t *mem;
	int prot;
	size_t *pairs;		/* offsets of the 0f a2 pairs, ascending */
	size_t npairs;
};

/* The functions worth decoding: those that hold a pair. */
struct fn_set {
	struct range *v;
	size_t n, cap;
	const struct xsec *xs;
	size_t nxs;
};

/* --- reading the file -------------------------------------------------- */

static void *read_at(int fd, uint64_t off, uint64_t len, uint64_t fsize)
{
	void *p;

	if (!len || off > fsize || len > fsize - off || len > (1ULL << 30))
		return NULL;
	p = malloc(len);
	if (p && pread(fd, p, len, (off_t)off) != (ssize_t)len) {
		free(p);
		p = NULL;
	}
	return p;
}

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return 0;
}

static bool push_range(struct range **v, size_t *n, size_t *cap,
		       uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return true;
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		struct range *nv = realloc(*v, c * sizeof(**v));

		if (!nv)
			return false;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = (struct range){ lo, hi };
	return true;
}

/* --- .eh_frame --------------------------------------------------------- */

static bool uleb(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (*p < end && shift < 64) {
		uint8_t b = *(*p)++;

		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			*out = v;
			return true;
		}
	}
	return false;
}

/* A DW_EH_PE-encoded value at @p (ELF address @at); false if unknown. */
static bool read_enc(const uint8_t **p, const uint8_t *end, uint8_t enc,
		     uint64_t at, bool apply, uint64_t *out)
{
	uint64_t v = 0;
	int64_t s;
	size_t n;

	if (enc == 0xff)	/* DW_EH_PE_omit */
		return false;
	switch (enc & 0x0f) {
	case 0x00: n = 8; break;	/* absptr */
	case 0x02: case 0x0a: n = 2; break;
	case 0x03: case 0x0b: n = 4; break;
	case 0x04: case 0x0c: n = 8; break;
	case 0x01:
		if (!uleb(p, end, &v))
			return false;
		n = 0;
		break;
	default:
		return false;
	}
	if (n) {
		if ((size_t)(end - *p) < n)
			return false;
		memcpy(&v, *p, n);
		*p += n;
		if (enc & 0x08) {	/* signed: sign-extend */
			s = n == 2 ? (int16_t)v : n == 4 ? (int32_t)v : (int64_t)v;
			v = (uint64_t)s;
		}
	}
	if (apply) {
		switch (enc & 0x70) {
		case 0x00: break;
		case 0x10: v += at; break;	/* pcrel */
		default: return false;		/* datarel etc.: not in .eh_frame */
		}
	}
	*out = v;
	return true;
}

/* The FDE pointer encoding of the CIE at @cie (0 = absptr), or -1. */
static int cie_fde_enc(const uint8_t *cie, const uint8_t *end)
{
	const uint8_t *p = cie;
	const char *aug;
	uint64_t u;
	uint8_t version;
	int enc = 0;

	if (end - p < 1)
		return -1;
	version = *p++;
	aug = (const char *)p;
	while (p < end && *p)
		p++;
	if (p >= end)
		return -1;
	p++;
	if (!uleb(&p, end, &u) || !uleb(&p, end, &u))	/* code, data align */
		return -1;
	if (version == 1) {
		if (p >= end)
			return -1;
		p++;
	} else if (!uleb(&p, end, &u)) {
		return -1;
	}
	if (aug[0] != 'z')
		return aug[0] ? -1 : 0;
	if (!uleb(&p, end, &u))
		return -1;
	for (const char *a = aug + 1; *a; a++) {
		if (*a == 'R') {
			if (p >= end)
				return -1;
			enc = *p++;
		} else if (*a == 'P') {
			uint64_t dummy;
			uint8_t penc;

			if (p >= end)
				return -1;
			penc = *p++;
			if (!read_enc(&p, end, penc & 0x7f, 0, false, &dummy))
				return -1;
		} else if (*a == 'L') {
			if (p >= end)
				return -1;
			p++;
		} else if (*a != 'S' && *a != 'B') {
			return -1;
		}
	}
	return enc;
}

/* Every FDE's [pc_begin, pc_begin + pc_range). */
static void fn_add(struct fn_set *f, uint64_t lo, uint64_t hi);

static void eh_frame_ranges(const uint8_t *eh, size_t size, uint64_t addr,
			    struct fn_set *fns)
{
	size_t off = 0;

	while (off + 8 <= size) {
		uint32_t len32, id;
		uint64_t len, body = off + 4;

		memcpy(&len32, eh + off, 4);
		if (!len32)
			break;
		len = len32;
		if (len32 == 0xffffffffU) {
			if (off + 12 > size)
				break;
			memcpy(&len, eh + off + 4, 8);
			body = off + 12;
		}
		if (len > size - body || len < 4)
			break;
		memcpy(&id, eh + body, 4);
		if (id) {
			/* FDE: the CIE is @id bytes before the id field. */
			uint64_t cie = body - id;
			const uint8_t *p = eh + body + 4, *end = eh + body + len;
			uint64_t begin, range;
			int enc;

			/* The CIE record: its length, its id (0), then
			 * the fields cie_fde_enc reads. */
			if (id <= body && cie + 8 <= size) {
				uint32_t clen;

				memcpy(&clen, eh + cie, 4);
				if (clen < 4 || clen > size - cie - 4)
					goto next;
				enc = cie_fde_enc(eh + cie + 8, eh + cie + 4 + clen);
				if (enc >= 0 &&
				    read_enc(&p, end, (uint8_t)enc,
					     addr + (uint64_t)(p - eh), true, &begin) &&
				    read_enc(&p, end, (uint8_t)enc & 0x0f, 0, false,
					     &range))
					fn_add(fns, begin, begin + range);
			}
		}
next:
		off = body + len;
	}
}

/* --- decoding and rewriting ------------------------------------------- */

static ZydisDecoder decoder;

/* More CPUIDs than this in one function: leave the function alone. */
#define MAX_CPUID_PER_FN	16

/*
 * Decode [p, p + len) as one function. Returns the number of CPUIDs found
 * (their offsets in @at, at most @max), or -1 when the bytes do not decode
 * cleanly to exactly @len.
 */
static int decode_function(const uint8_t *p, size_t len, size_t *at, int max)
{
	ZydisDecodedInstruction insn;
	size_t off = 0;
	int n = 0;

	while (off < len) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&decoder, NULL,
				p + off, len - off, &insn)))
			return -1;
		if (insn.mnemonic == ZYDIS_MNEMONIC_CPUID) {
			if (n >= max)
				return -1;
			at[n++] = off;
		}
		off += insn.length;
	}
	return off == len ? n : -1;
}

/* Offsets of every 0f a2 pair in [p, p + len), ascending. */
static size_t cpuid_pairs(const uint8_t *p, size_t len, size_t **out)
{
	size_t n = 0, cap = 0;

	*out = NULL;
	for (const uint8_t *q = p + 1, *end = p + len; q < end &&
	     (q = memchr(q, 0xa2, (size_t)(end - q))) != NULL; q++) {
		if (q[-1] != 0x0f)
			continue;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 64, *nv;

			nv = realloc(*out, c * sizeof(*nv));
			if (!nv)
				break;
			*out = nv;
			cap = c;
		}
		(*out)[n++] = (size_t)(q - 1 - p);
	}
	return n;
}

/* Does [lo, hi) hold one of the sorted @pairs? */
static bool pair_in(const size_t *pairs, size_t n, size_t lo, size_t hi)
{
	size_t a = 0, b = n;

	while (a < b) {
		size_t mid = (a + b) / 2;

		if (pairs[mid] < lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a < n && pairs[a] + 1 < hi;
}

static void fn_add(struct fn_set *f, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < f->nxs; i++) {
		const struct xsec *x = &f->xs[i];

		if (lo >= x->addr && hi > lo && hi <= x->addr + x->size) {
			if (pair_in(x->pairs, x->npairs, lo - x->addr, hi - x->addr))
				push_range(&f->v, &f->n, &f->cap, lo, hi);
			return;
		}
	}
}

/* UD2 at @site (which holds CPUID): recorded first, then one byte. */
static bool rewrite_site(int memfd, uint8_t *site, int prot)
{
	static const uint8_t ud2_second = 0x0b;
	uintptr_t page = (uintptr_t)(site + 1) & ~(uintptr_t)4095;

	if (site[0] != 0x0f || site[1] != 0xa2)
		return site[0] == 0x0f && site[1] == 0x0b &&
		       sgxemu__cpuid_site_known((uintptr_t)site);
	if (sgxemu__cpuid_site_add((uintptr_t)site))
		return false;
	if (memfd >= 0 &&
	    pwrite(memfd, &ud2_second, 1, (off_t)(uintptr_t)(site + 1)) == 1)
		return true;
	if (!shim_real_mprotect((void *)page, 4096,
				PROT_READ | PROT_WRITE | PROT_EXEC)) {
		__atomic_store_n(site + 1, ud2_second, __ATOMIC_RELEASE);
		shim_real_mprotect((void *)page, 4096, prot);
		return true;
	}
	sgxemu__cpuid_site_del((uintptr_t)site);
	return false;
}

/* Is [pos, pos+2) inside one of the sorted, merged @cover ranges? */
static bool covered(const struct range *cover, size_t n, uint64_t pos)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (cover[mid].hi <= pos)
			lo = mid + 1;
		else if (cover[mid].lo > pos)
			hi = mid;
		else
			return true;
	}
	return false;
}

/*
 * Scan one object: its executable sections that lie in executable
 * mappings [@maps, @maps + @nmaps) (same file), rewriting what decodes
 * cleanly.
 */
/* Where an executable section's bytes are mapped (and that mapping's
 * protection in @prot), or NULL. */
static const uint8_t *section_mem(const Elf64_Shdr *s,
				  const struct rw_map *maps, size_t nmaps,
				  int *prot)
{
	if (!(s->sh_flags & SHF_EXECINSTR) || s->sh_type != SHT_PROGBITS ||
	    !s->sh_size)
		return NULL;
	for (size_t m = 0; m < nmaps; m++)
		if (s->sh_offset >= maps[m].off &&
		    s->sh_offset + s->sh_size <= maps[m].off +
		    (maps[m].end - maps[m].start)) {
			*prot = maps[m].prot;
			return (const uint8_t *)(maps[m].start +
						 (s->sh_offset - maps[m].off));
		}
	return NULL;
}

static void obj_site(struct rw_obj *o, uint8_t *site)
{
	if (o->nr_sites == o->cap_sites) {
		size_t c = o->cap_sites ? o->cap_sites * 2 : 8;
		uintptr_t *n = realloc(o->sites, c * sizeof(*n));

		if (!n)
			return;	/* stays recorded in the trap's table */
		o->sites = n;
		o->cap_sites = c;
	}
	o->sites[o->nr_sites++] = (uintptr_t)site;
}

static void scan_object(struct rw_obj *o, const struct rw_map *maps,
			size_t nmaps, int memfd, struct scan_stats *st)
{
	const char *path = maps[0].path;
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	struct range *fn = NULL, *cover = NULL;
	size_t nfn = 0, ncover = 0, capcover = 0, nxs = 0;
	struct xsec *xs = NULL;
	struct fn_set fns = {0};
	int *res = NULL;			/* per function: CPUIDs, or -1 */
	size_t (*at)[MAX_CPUID_PER_FN] = NULL;	/* their offsets */
	struct stat sb;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		shim_log("cpuid: %s: cannot open (%s): its CPUIDs stay native",
			 path, strerror(errno));
		return;
	}
	if (fstat(fd, &sb) || sb.st_ino != maps[0].ino ||
	    sb.st_dev != maps[0].dev) {
		shim_log("cpuid: %s changed on disk since it was mapped: its "
			 "CPUIDs stay native", path);
		goto out;
	}
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || !eh.e_shnum) {
		shim_log("cpuid: %s: no x86-64 ELF section headers: its CPUIDs "
			 "stay native", path);
		goto out;
	}
	sh = read_at(fd, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(*sh),
		     (uint64_t)sb.st_size);
	if (!sh) {
		shim_log("cpuid: %s: unreadable section headers: its CPUIDs "
			 "stay native", path);
		goto out;
	}

	/* The executable sections with 0f a2 pairs: nothing to do (most
	 * objects) without one. */
	xs = calloc(eh.e_shnum, sizeof(*xs));
	if (!xs)
		goto out;
	for (int i = 0; i < eh.e_shnum; i++) {
		struct xsec *x = &xs[nxs];

		x->prot = PROT_READ | PROT_EXEC;
		x->mem = section_mem(&sh[i], maps, nmaps, &x->prot);
		if (!x->mem || !(x->npairs = cpuid_pairs(x->mem, sh[i].sh_size,
							  &x->pairs)))
			continue;
		x->addr = sh[i].sh_addr;
		x->size = sh[i].sh_size;
		nxs++;
	}
	if (!nxs)
		goto out;
	fns.xs = xs;
	fns.nxs = nxs;

	/* Function boundaries: FDEs, then sized function symbols. */
	for (int i = 0; i < eh.e_shnum; i++) {
		uint8_t *data;

		if (sh[i].sh_type == SHT_X86_64_UNWIND ||
		    (sh[i].sh_type == SHT_PROGBITS && eh.e_shstrndx < eh.e_shnum)) {
			char name[16] = "";

			if (sh[i].sh_type != SHT_X86_64_UNWIND &&
			    pread(fd, name, sizeof(name) - 1,
				  (off_t)(sh[eh.e_shstrndx].sh_offset +
					  sh[i].sh_name)) <= 0)
				continue;
			if (sh[i].sh_type != SHT_X86_64_UNWIND &&
			    strcmp(name, ".eh_frame"))
				continue;
			data = read_at(fd, sh[i].sh_offset, sh[i].sh_size,
				       (uint64_t)sb.st_size);
			if (data)
				eh_frame_ranges(data, sh[i].sh_size, sh[i].sh_addr,
						&fns);
			free(data);
		} else if (sh[i].sh_type == SHT_SYMTAB ||
			   sh[i].sh_type == SHT_DYNSYM) {
			Elf64_Sym *sym = read_at(fd, sh[i].sh_offset, sh[i].sh_size,
						 (uint64_t)sb.st_size);

			for (size_t k = 0; sym && k < sh[i].sh_size / sizeof(*sym); k++) {
				unsigned t = ELF64_ST_TYPE(sym[k].st_info);

				if ((t == STT_FUNC || t == STT_GNU_IFUNC) &&
				    sym[k].st_size)
					fn_add(&fns, sym[k].st_value,
					       sym[k].st_value + sym[k].st_size);
			}
			free(sym);
		}
	}
	fn = fns.v;
	nfn = fns.n;
	if (nfn)
		qsort(fn, nfn, sizeof(*fn), range_cmp);

	res = calloc(nfn ? nfn : 1, sizeof(*res));
	at = calloc(nfn ? nfn : 1, sizeof(*at));
	if (!res || !at)
		goto out;
	for (size_t i = 0; i < nxs; i++) {
		const struct xsec *s = &xs[i];
		const uint8_t *mem = s->mem;

		/* Decode every function here, then rewrite a CPUID only where
		 * every clean function that covers it saw the same
		 * instruction there (a symbol that starts inside another
		 * function must not decide alone). */
		for (size_t f = 0; f < nfn; f++) {
			res[f] = -2;	/* not in this section */
			if (fn[f].lo < s->addr || fn[f].hi > s->addr + s->size ||
			    (f && !range_cmp(&fn[f], &fn[f - 1])))
				continue;
			res[f] = decode_function(mem + (fn[f].lo - s->addr),
						 fn[f].hi - fn[f].lo, at[f],
						 MAX_CPUID_PER_FN);
			if (res[f] < 0)
				st->unclean++;
		}
		for (size_t f = 0; f < nfn; f++) {
			for (int k = 0; k < res[f]; k++) {
				uint64_t a = fn[f].lo + at[f][k];
				uint8_t *site = (uint8_t *)mem + (a - s->addr);
				bool agree = true;

				for (size_t g = 0; g < nfn && agree; g++) {
					bool seen = false;

					if (g == f || res[g] < 0 || fn[g].lo > a ||
					    fn[g].hi < a + 2)
						continue;
					for (int j = 0; j < res[g]; j++)
						seen |= fn[g].lo + at[g][j] == a;
					agree = seen;
				}
				if (!agree) {
					st->disagree++;
				} else if (sgxemu__cpuid_site_known((uintptr_t)site)) {
					continue;	/* found twice */
				} else if (rewrite_site(memfd, site, s->prot)) {
					obj_site(o, site);
					st->rewritten++;
				} else {
					st->failed++;
				}
			}
		}
		/* Merge this section's functions, then count the 0f a2
		 * pairs no function holds: CPUIDs, if any, that stay native
		 * (those of unclean functions are counted above). */
		size_t w = 0;
		ncover = 0;
		for (size_t f = 0; f < nfn; f++)
			if (fn[f].lo >= s->addr && fn[f].hi <= s->addr + s->size)
				push_range(&cover, &ncover, &capcover, fn[f].lo,
					   fn[f].hi);
		for (size_t g = 0; g < ncover; g++) {
			if (w && cover[g].lo <= cover[w - 1].hi) {
				if (cover[g].hi > cover[w - 1].hi)
					cover[w - 1].hi = cover[g].hi;
			} else {
				cover[w++] = cover[g];
			}
		}
		for (size_t k = 0; k < s->npairs; k++)
			if (!covered(cover, w, s->addr + s->pairs[k]))
				st->outside++;
	}
out:
	free(res);
	free(at);
	for (size_t i = 0; i < nxs; i++)
		free(xs[i].pairs);
	free(xs);
	free(fn);
	free(cover);
	free(sh);
	close(fd);
}

/* --- /proc/self/maps ---------------------------------------------------- */

static char *read_maps(void)
{
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap);
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0 || !buf) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return NULL;
	}
	while ((r = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)r;
		if (len + 1 == cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	close(fd);
	buf[len] = 0;
	return buf;
}

/* Parse one maps line; true for a readable, executable file mapping. */
static bool parse_map(char *line, struct rw_map *m)
{
	unsigned long long start, end, off, ino;
	unsigned maj, min;
	char perms[5];
	int pos = 0;

	if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &start, &end,
		   perms, &off, &maj, &min, &ino, &pos) < 7 || !pos)
		return false;
	/* Private mappings only: a store into a shared one would reach the
	 * file itself. */
	if (perms[0] != 'r' || perms[2] != 'x' || perms[3] != 'p' || !ino ||
	    line[pos] != '/')
		return false;
	m->prot = PROT_READ | PROT_EXEC | (perms[1] == 'w' ? PROT_WRITE : 0);
	m->start = start;
	m->end = end;
	m->off = off;
	m->dev = makedev(maj, min);
	m->ino = ino;
	m->path = line + pos;
	return true;
}

static bool skip_path(const struct rw_map *m)
{
	size_t n = strlen(m->path);

	return !strncmp(m->path, "/dev/", 5) || !strncmp(m->path, "/memfd:", 7) ||
	       (n > 10 && !strcmp(m->path + n - 10, " (deleted)")) ||
	       shim_internal_caller((const void *)m->start);
}

static struct rw_obj *obj_find(const struct rw_map *m)
{
	for (size_t i = 0; i < nr_objs; i++)
		if (objs[i].dev == m->dev && objs[i].ino == m->ino &&
		    objs[i].bias == m->start - m->off)
			return &objs[i];
	return NULL;
}

static struct rw_obj *obj_add(const struct rw_map *m)
{
	if (nr_objs == cap_objs) {
		size_t c = cap_objs ? cap_objs * 2 : 64;
		struct rw_obj *n = realloc(objs, c * sizeof(*objs));

		if (!n)
			return NULL;
		objs = n;
		cap_objs = c;
	}
	objs[nr_objs] = (struct rw_obj){ .dev = m->dev, .ino = m->ino,
		.bias = m->start - m->off, .lo = m->start, .hi = m->end,
		.seen = true };
	return &objs[nr_objs++];
}

/*
 * Read the maps; scan every object not scanned before; forget objects no
 * longer mapped (and their sites). Returns the number of sites rewritten.
 */
static size_t rescan(void)
{
	char *buf = read_maps(), *line, *save = NULL;
	struct rw_map *maps = NULL;
	size_t nmaps = 0, capmaps = 0, total = 0;
	int memfd = -1;

	if (!buf) {
		shim_log("cpuid: cannot read /proc/self/maps: new code's CPUIDs "
			 "stay native");
		return 0;
	}
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct rw_map m;

		if (!parse_map(line, &m) || skip_path(&m))
			continue;
		if (nmaps == capmaps) {
			size_t c = capmaps ? capmaps * 2 : 64;
			struct rw_map *n = realloc(maps, c * sizeof(*maps));

			if (!n)
				break;
			maps = n;
			capmaps = c;
		}
		maps[nmaps++] = m;
	}
	for (size_t i = 0; i < nr_objs; i++)
		objs[i].seen = false;
	for (size_t i = 0; i < nmaps; i++) {
		struct rw_obj *o = obj_find(&maps[i]);
		struct scan_stats st = {0};
		size_t j, n;

		if (o) {
			o->seen = true;
			continue;
		}
		/* The object's other executable mappings (same file, same
		 * bias) come next in the maps: scan them together. */
		for (j = i + 1; j < nmaps && maps[j].ino == maps[i].ino &&
		     maps[j].dev == maps[i].dev &&
		     maps[j].start - maps[j].off == maps[i].start - maps[i].off; j++)
			;
		n = j - i;
		o = obj_add(&maps[i]);
		if (!o)
			break;
		o->hi = maps[j - 1].end;
		if (memfd < 0)
			memfd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
		scan_object(o, &maps[i], n, memfd, &st);
		total += st.rewritten;
		if (st.rewritten || st.unclean || st.disagree || st.outside ||
		    st.failed)
			shim_log("cpuid: %s: %zu CPUID rewritten to trap; left "
				 "native: %zu function(s) with 0f a2 that do not "
				 "decode cleanly, %zu CPUID(s) where overlapping "
				 "functions disagree, %zu 0f a2 byte pair(s) outside "
				 "known functions, %zu site(s) not writable",
				 maps[i].path, st.rewritten, st.unclean,
				 st.disagree, st.outside, st.failed);
		i = j - 1;
	}
	/* Objects gone (dlclose, munmap): their addresses may be reused. */
	for (size_t i = 0; i < nr_objs;) {
		if (objs[i].seen) {
			i++;
			continue;
		}
		for (size_t k = 0; k < objs[i].nr_sites; k++)
			sgxemu__cpuid_site_del(objs[i].sites[k]);
		free(objs[i].sites);
		objs[i] = objs[--nr_objs];
	}
	if (memfd >= 0)
		close(memfd);
	free(maps);
	free(buf);
	return total;
}

size_t shim_cpuid_rewrite_scan(void)
{
	static bool decoder_ready;
	size_t n;

	pthread_mutex_lock(&rw_lock);
	if (!decoder_ready) {
		ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64,
				 ZYDIS_STACK_WIDTH_64);
		decoder_ready = true;
	}
	n = rescan();
	pthread_mutex_unlock(&rw_lock);
	return n;
}

void shim_cpuid_rewrite_fork_child(void)
{
	pthread_mutex_init(&rw_lock, NULL);
}
