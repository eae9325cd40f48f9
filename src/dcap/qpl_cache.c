/* SPDX-License-Identifier: MIT */
/*
 * The quote provider's cache of PCCS answers, as QCNL keeps one when
 * pck_cache_expire_hours or verify_collateral_cache_expire_hours is not 0
 * (the shipped configuration says 168): an answer of 200 is kept for that
 * many hours and given again for the same URL without asking the PCCS.
 * In this process's memory only: QCNL also writes its cache to a
 * .dcap-qcnl directory, which would let one test's collateral answer
 * another's; sgx_qpl_clear_cache empties it. A small fixed table: PCK
 * certificates are one per platform and collateral a few per FMSPC.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dcap/qpl.h"

#define QPL_CACHE_SLOTS	32

static struct {
	char *url;
	unsigned kind;
	time_t expires;
	struct qpl_reply r;
} slots[QPL_CACHE_SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void slot_free(int i)
{
	free(slots[i].url);
	qpl_reply_free(&slots[i].r);
	memset(&slots[i], 0, sizeof(slots[i]));
}

/* A deep copy of @from into @to (0), or -1 out of memory. */
static int copy_reply(struct qpl_reply *to, const struct qpl_reply *from)
{
	memset(to, 0, sizeof(*to));
	to->status = from->status;
	to->body = malloc(from->len + 1);
	if (!to->body)
		return -1;
	memcpy(to->body, from->body, from->len);
	to->body[from->len] = 0;
	to->len = from->len;
	for (int i = 0; i < from->nr_headers; i++) {
		to->headers[i].name = strdup(from->headers[i].name);
		to->headers[i].value = strdup(from->headers[i].value);
		to->nr_headers = i + 1;
		if (!to->headers[i].name || !to->headers[i].value) {
			qpl_reply_free(to);
			return -1;
		}
	}
	return 0;
}

bool qpl_cache_get(unsigned kind, const char *url, struct qpl_reply *out)
{
	time_t now = time(NULL);
	bool hit = false;

	pthread_mutex_lock(&lock);
	for (int i = 0; i < QPL_CACHE_SLOTS && !hit; i++) {
		if (!slots[i].url || slots[i].kind != kind || strcmp(slots[i].url, url))
			continue;
		if (slots[i].expires <= now) {
			slot_free(i);
			break;
		}
		hit = !copy_reply(out, &slots[i].r);
	}
	pthread_mutex_unlock(&lock);
	return hit;
}

void qpl_cache_put(unsigned kind, const char *url, const struct qpl_reply *r,
		   unsigned hours)
{
	time_t now = time(NULL);
	int victim = 0;

	if (!hours || r->status != 200)
		return;
	pthread_mutex_lock(&lock);
	/* The same URL, else a free slot, else the one expiring first. */
	for (int i = 0; i < QPL_CACHE_SLOTS; i++) {
		if (slots[i].url && slots[i].kind == kind && !strcmp(slots[i].url, url)) {
			victim = i;
			break;
		}
		if (!slots[i].url || slots[i].expires < slots[victim].expires)
			victim = i;
		if (!slots[victim].url)
			break;
	}
	slot_free(victim);
	slots[victim].url = strdup(url);
	if (slots[victim].url && !copy_reply(&slots[victim].r, r)) {
		slots[victim].kind = kind;
		slots[victim].expires = now + (time_t)hours * 3600;
	} else {
		slot_free(victim);
	}
	pthread_mutex_unlock(&lock);
}

void qpl_cache_clear(unsigned kinds)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < QPL_CACHE_SLOTS; i++)
		if (slots[i].url && (slots[i].kind & kinds))
			slot_free(i);
	pthread_mutex_unlock(&lock);
}
