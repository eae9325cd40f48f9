// SPDX-License-Identifier: MIT
/* The collateral JSON reader (see json.h): recursive descent, bounded. */
#include <stdio.h>
#include <string.h>

#include "attest/json.h"
#include "base/hex.h"

struct parser {
	struct json_doc *doc;
	const char *s;
	size_t len, pos;
	char *why;
	size_t whylen;
};

static int perr(struct parser *p, const char *what)
{
	if (p->why && p->whylen)
		snprintf(p->why, p->whylen, "JSON: %s at byte %zu", what, p->pos);
	return -1;
}

static void skip_ws(struct parser *p)
{
	while (p->pos < p->len && strchr(" \t\r\n", p->s[p->pos]) && p->s[p->pos])
		p->pos++;
}

static int new_node(struct parser *p, enum json_type type)
{
	struct json_node *n;

	if (p->doc->count >= JSON_MAX_NODES)
		return perr(p, "too many values");
	n = &p->doc->nodes[p->doc->count];
	memset(n, 0, sizeof(*n));
	n->type = type;
	n->raw = p->s + p->pos;
	n->child = n->next = -1;
	return p->doc->count++;
}

/* A string's extent; escapes are kept raw, control bytes refused. */
static int scan_string(struct parser *p, const char **start, size_t *slen)
{
	if (p->pos >= p->len || p->s[p->pos] != '"')
		return perr(p, "expected a string");
	*start = p->s + ++p->pos;
	while (p->pos < p->len) {
		unsigned char c = (unsigned char)p->s[p->pos];

		if (c == '"') {
			*slen = (size_t)(p->s + p->pos - *start);
			p->pos++;
			return 0;
		}
		if (c < 0x20)
			return perr(p, "control character in a string");
		if (c == '\\') {
			if (p->pos + 1 >= p->len)
				break;
			p->pos++;
		}
		p->pos++;
	}
	return perr(p, "unterminated string");
}

static int parse_value(struct parser *p, int depth);

/* Elements or members after the opening bracket, linked as children. */
static int parse_items(struct parser *p, int parent, bool object, int depth)
{
	char close = object ? '}' : ']';
	int prev = -1;

	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == close) {
		p->pos++;
		return 0;
	}
	for (;;) {
		const char *key = NULL;
		size_t keylen = 0;
		int n;

		skip_ws(p);
		if (object) {
			if (scan_string(p, &key, &keylen))
				return -1;
			skip_ws(p);
			if (p->pos >= p->len || p->s[p->pos] != ':')
				return perr(p, "expected ':'");
			p->pos++;
			skip_ws(p);
		}
		n = parse_value(p, depth + 1);
		if (n < 0)
			return -1;
		p->doc->nodes[n].key = key;
		p->doc->nodes[n].keylen = keylen;
		if (prev < 0)
			p->doc->nodes[parent].child = n;
		else
			p->doc->nodes[prev].next = n;
		prev = n;
		skip_ws(p);
		if (p->pos >= p->len)
			return perr(p, "unterminated container");
		if (p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->s[p->pos] == close) {
			p->pos++;
			return 0;
		}
		return perr(p, "expected ',' or a closing bracket");
	}
}

static int parse_value(struct parser *p, int depth)
{
	const char *start;
	size_t slen;
	int n;

	if (depth > JSON_MAX_DEPTH)
		return perr(p, "nested too deeply");
	if (p->pos >= p->len)
		return perr(p, "expected a value");
	switch (p->s[p->pos]) {
	case '{':
	case '[': {
		bool object = p->s[p->pos] == '{';

		n = new_node(p, object ? JSON_OBJECT : JSON_ARRAY);
		if (n < 0)
			return -1;
		p->pos++;
		if (parse_items(p, n, object, depth))
			return -1;
		break;
	}
	case '"':
		n = new_node(p, JSON_STRING);
		if (n < 0 || scan_string(p, &start, &slen))
			return -1;
		break;
	case 't': case 'f': case 'n': {
		static const char *const words[] = { "true", "false", "null" };
		int w = p->s[p->pos] == 't' ? 0 : p->s[p->pos] == 'f' ? 1 : 2;
		size_t wl = strlen(words[w]);

		if (p->len - p->pos < wl || memcmp(p->s + p->pos, words[w], wl))
			return perr(p, "unknown word");
		n = new_node(p, w == 2 ? JSON_NULL : JSON_BOOL);
		if (n < 0)
			return -1;
		p->doc->nodes[n].truth = w == 0;
		p->pos += wl;
		break;
	}
	default: {
		uint64_t v = 0;
		size_t digits = 0;

		n = new_node(p, JSON_NUMBER);
		if (n < 0)
			return -1;
		while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
			unsigned d = (unsigned)(p->s[p->pos] - '0');

			if (v > (UINT64_MAX - d) / 10)
				return perr(p, "number too large");
			v = v * 10 + d;
			p->pos++;
			digits++;
		}
		if (!digits)
			return perr(p, "expected a value");
		if (digits > 1 && p->doc->nodes[n].raw[0] == '0')
			return perr(p, "leading zero");
		if (p->pos < p->len && strchr(".eE-+", p->s[p->pos]) && p->s[p->pos])
			return perr(p, "only non-negative integers are accepted");
		p->doc->nodes[n].num = v;
		break;
	}
	}
	p->doc->nodes[n].rawlen = (size_t)(p->s + p->pos - p->doc->nodes[n].raw);
	return n;
}

int json_parse(struct json_doc *doc, const char *text, size_t len,
	       char *why, size_t whylen)
{
	struct parser p = { doc, text, len, 0, why, whylen };

	doc->count = 0;
	skip_ws(&p);
	if (parse_value(&p, 0) < 0)
		return -1;
	skip_ws(&p);
	if (p.pos != len)
		return perr(&p, "trailing bytes");
	return 0;
}

int json_member(const struct json_doc *doc, int obj, const char *key)
{
	size_t kl = strlen(key);

	if (obj < 0 || doc->nodes[obj].type != JSON_OBJECT)
		return -1;
	for (int c = doc->nodes[obj].child; c >= 0; c = doc->nodes[c].next)
		if (doc->nodes[c].keylen == kl && !memcmp(doc->nodes[c].key, key, kl))
			return c;
	return -1;
}

int json_typed(const struct json_doc *doc, int obj, const char *key,
	       enum json_type type)
{
	int n = json_member(doc, obj, key);

	return n >= 0 && doc->nodes[n].type == type ? n : -1;
}

bool json_str_is(const struct json_doc *doc, int node, const char *s)
{
	size_t l = strlen(s);

	return node >= 0 && doc->nodes[node].type == JSON_STRING &&
	       doc->nodes[node].rawlen == l + 2 &&
	       !memcmp(doc->nodes[node].raw + 1, s, l);
}

int json_hex(const struct json_doc *doc, int node, uint8_t *out, size_t n)
{
	char buf[130];
	const struct json_node *j;

	if (node < 0 || n > 64)
		return -1;
	j = &doc->nodes[node];
	if (j->type != JSON_STRING || j->rawlen != 2 * n + 2)
		return -1;
	memcpy(buf, j->raw + 1, 2 * n);
	buf[2 * n] = '\0';
	return sgx_unhex(buf, out, n) ? -1 : 0;
}

int json_len(const struct json_doc *doc, int node)
{
	int n = 0;

	if (node < 0)
		return -1;
	for (int c = doc->nodes[node].child; c >= 0; c = doc->nodes[c].next)
		n++;
	return n;
}
