/* SPDX-License-Identifier: MIT */
/*
 * fork() and the EPC.
 *
 * On Linux a forked child inherits the enclave mappings, which point to
 * the same enclave: the enclave belongs to the file, the reclaimer keeps
 * paging it, and its EPC pages are freed when the last reference to the
 * file goes, in whichever process that is (linux-driver-facts.md §1.4,
 * §2.6). Here the EPC memfd is shared with the child, so the child sees
 * the parent's enclave pages, but the processor state (EPCM, allocator,
 * page states) is copied. So, per fork:
 *
 * - The free EPC pages are split (every other one each), so that
 *   enclaves either side creates afterwards never share a page.
 * - The enclaves that exist are "shared": neither process evicts their
 *   pages (the other one could be using them), and pages the parent
 *   frees from them (destroy) stay allocated while the child could use
 *   them.
 * - The parent follows the child with a token, the read end of a pipe
 *   whose write end only the child holds (O_CLOEXEC; its own children
 *   inherit it). When it hangs up, the child and everything it forked
 *   have exited or exec'd, i.e. dropped their references: the child's
 *   share of the free EPC and the pages held for it come back, and the
 *   enclaves are the parent's alone again, reclaimed as before. The
 *   parent notices it when it reclaims, in ksgxd's loop, when it reads
 *   the statistics, and when an allocation finds nothing reclaimable,
 *   which waits (bounded, once per child) for such a child to go.
 *
 * What stays different from Linux: while a child lives, the enclaves it
 * shares are not reclaimed at all, and the child never gives back the
 * enclaves it inherited (they are the parent's).
 *
 * The token table is guarded by the paging lock, which fork holds from
 * prepare to the end with the allocator's lock, so both processes split
 * the same state.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "driver/paging.h"

#define NR_TOKENS	64		/* token ids 1..63 */
#define WAIT_MS		5000		/* longest wait for one child */

static int tok_fd[NR_TOKENS];
static uint64_t live;			/* tokens whose child may be there */
static uint64_t waited;			/* tokens an allocation gave up on */
static int pending_fd[2];
static int pending_tok;

static void mark_enclaves(uint64_t bit, bool child)
{
	for (int i = 0; i < MAX_ENCLAVES; i++) {
		struct sgxemu_enclave *e = atomic_load(&sgxemu__enclaves[i]);

		if (!e || !e->pg)
			continue;
		/* In the child the enclaves are the parent's for good. */
		e->pg->fork_mask = child ? SGX_FORK_UNTRACKED
					 : e->pg->fork_mask | bit;
		e->pg->shared = true;
	}
}

/* Paging lock first, then the allocator's, so nothing moves. */
static void fork_prepare(void)
{
	sgxemu__paging_lock();
	/* Queued backing drops are this process's: done before sharing. */
	for (int i = 0; i < MAX_ENCLAVES; i++) {
		struct sgxemu_enclave *e = atomic_load(&sgxemu__enclaves[i]);

		if (e && e->pg)
			sgxemu__backing_flush(e->pg);
	}
	pending_tok = 0;
	for (int t = 1; t < NR_TOKENS; t++)
		if (!(live & (1ULL << t))) {
			if (!pipe2(pending_fd, O_CLOEXEC))
				pending_tok = t;
			break;
		}
	sgxemu__epc_fork_lock();
}

static void fork_parent(void)
{
	uint64_t bit = SGX_FORK_UNTRACKED;

	if (pending_tok) {
		close(pending_fd[1]);
		tok_fd[pending_tok] = pending_fd[0];
		bit = 1ULL << pending_tok;
		__atomic_fetch_or(&live, bit, __ATOMIC_RELEASE);
	}
	/* Either side may write any page of the shared memfd from now on. */
	sgx_cpu_epc_shared(sgxemu__cpu());
	sgxemu__epc_fork_split(false, bit);
	sgxemu__epc_fork_unlock(false);
	mark_enclaves(bit, false);
	sgxemu__paging_unlock();
}

/* The child keeps its token's write end for life; the tokens of the
 * parent's other children are not its business. */
static void fork_child(void)
{
	if (pending_tok)
		close(pending_fd[0]);
	for (int t = 1; t < NR_TOKENS; t++)
		if (live & (1ULL << t))
			close(tok_fd[t]);
	live = 0;
	waited = 0;
	sgx_cpu_epc_shared(sgxemu__cpu());
	sgxemu__thread_fork_child();
	sgxemu__epc_fork_split(true, 0);
	sgxemu__epc_fork_unlock(true);
	mark_enclaves(0, true);
	sgxemu__paging_lock_reinit();
}

static void do_register(void)
{
	if (pthread_atfork(fork_prepare, fork_parent, fork_child))
		sgxemu__write_str("sgxemu: pthread_atfork failed: a forked "
				  "child may share EPC pages with its parent\n");
}

void sgxemu__epc_fork_register(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, do_register);
}

bool sgxemu__epc_fork_reap(void)
{
	struct pollfd p[NR_TOKENS];
	int id[NR_TOKENS], n = 0;
	uint64_t dead = 0;

	if (!__atomic_load_n(&live, __ATOMIC_ACQUIRE))
		return false;
	sgxemu__paging_lock();
	for (int t = 1; t < NR_TOKENS; t++)
		if (live & (1ULL << t)) {
			/* No events asked: a hang-up is always reported. */
			p[n].fd = tok_fd[t];
			p[n].events = 0;
			id[n++] = t;
		}
	/* POLLNVAL (the program closed our descriptor) proves nothing
	 * about the child: that token stays, its enclaves shared. */
	if (n && poll(p, (nfds_t)n, 0) > 0)
		for (int i = 0; i < n; i++)
			if (p[i].revents & (POLLHUP | POLLERR)) {
				close(tok_fd[id[i]]);
				dead |= 1ULL << id[i];
			}
	if (dead) {
		__atomic_fetch_and(&live, ~dead, __ATOMIC_RELEASE);
		__atomic_fetch_and(&waited, ~dead, __ATOMIC_RELAXED);
		for (int i = 0; i < MAX_ENCLAVES; i++) {
			struct sgxemu_enclave *e = atomic_load(&sgxemu__enclaves[i]);

			if (!e || !e->pg || !(e->pg->fork_mask & dead))
				continue;
			e->pg->fork_mask &= ~dead;
			e->pg->shared = e->pg->fork_mask != 0;
		}
		sgxemu__epc_fork_gone(dead);
	}
	sgxemu__paging_unlock();
	return dead != 0;
}

/*
 * Polling, not blocking on the pipes: a reap by another thread may close
 * them. Each child is waited for once: one that keeps running gets the
 * old answer (ENOMEM) at once afterwards, as before its token existed.
 */
bool sgxemu__epc_fork_wait(void)
{
	uint64_t now = __atomic_load_n(&live, __ATOMIC_ACQUIRE);
	struct timespec ms = { 0, 1000 * 1000 };

	if (!(now & ~__atomic_load_n(&waited, __ATOMIC_RELAXED)))
		return false;
	for (int i = 0; i < WAIT_MS; i++) {
		if (sgxemu__epc_fork_reap())
			return true;
		nanosleep(&ms, NULL);
	}
	__atomic_fetch_or(&waited, now, __ATOMIC_RELAXED);
	return false;
}

/* Under the paging lock, so that a reap either has cleared a gone
 * child's bit already or will clear it in the group made here. */
uint8_t sgxemu__epc_fork_group(struct sgxemu_enclave *e)
{
	uint8_t g;

	sgxemu__epc_fork_reap();
	sgxemu__paging_lock();
	g = e->pg ? sgxemu__epc_group(e->pg->fork_mask) : 0;
	if (e->pg)
		e->pg->pin_group = g;
	sgxemu__paging_unlock();
	return g;
}
