/* SPDX-License-Identifier: MIT */
/*
 * A small JSON reader for the collateral documents (TCB info, QE identity:
 * attestation-facts.md §4). Their signatures cover the exact bytes of one
 * member's value, so every node keeps its raw span in the input; nothing is
 * copied or unescaped. Only what those documents use is accepted: objects,
 * arrays, strings, non-negative integers, true, false, null; nesting at
 * most JSON_MAX_DEPTH, at most JSON_MAX_NODES values.
 */
#ifndef SGXEMU_ATTEST_JSON_H
#define SGXEMU_ATTEST_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_NODES	2048
#define JSON_MAX_DEPTH	16

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING,
		 JSON_ARRAY, JSON_OBJECT };

struct json_node {
	enum json_type type;
	const char *raw;	/* the value's bytes in the input */
	size_t rawlen;
	const char *key;	/* member name (unquoted, raw) in an object */
	size_t keylen;
	int child;		/* first element / member, -1 if none */
	int next;		/* next sibling, -1 if last */
	uint64_t num;		/* JSON_NUMBER */
	bool truth;		/* JSON_BOOL */
};

struct json_doc {
	struct json_node nodes[JSON_MAX_NODES];
	int count;
};

/* Parse @len bytes; node 0 is the top value. 0, or -1 with @why set. */
int json_parse(struct json_doc *doc, const char *text, size_t len,
	       char *why, size_t whylen);

/* The member @key of object node @obj, or -1. */
int json_member(const struct json_doc *doc, int obj, const char *key);
/* Member @key when it has type @type, else -1. */
int json_typed(const struct json_doc *doc, int obj, const char *key,
	       enum json_type type);
/* String node's content (without quotes) equals @s. */
bool json_str_is(const struct json_doc *doc, int node, const char *s);
/* String node of exactly 2*@n hex digits into @out: 0 or -1. */
int json_hex(const struct json_doc *doc, int node, uint8_t *out, size_t n);
/* Number of elements of an array / members of an object. */
int json_len(const struct json_doc *doc, int node);

#endif /* SGXEMU_ATTEST_JSON_H */
