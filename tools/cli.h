/* SPDX-License-Identifier: MIT */
/*
 * What every `sgxemu` subcommand shares: the command table entry, error
 * reporting (one line on stderr, prefixed with the command, so scripts and
 * people see which step failed), whole-file I/O and number parsing.
 */
#ifndef SGXEMU_TOOLS_CLI_H
#define SGXEMU_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes: 0 done, 1 the operation failed, 2 the command line is wrong. */
#define CLI_EXIT_OK	0
#define CLI_EXIT_FAIL	1
#define CLI_EXIT_USAGE	2

struct cli_command {
	const char *name;
	const char *summary;	/* one line for `sgxemu --help` */
	const char *usage;	/* full text for `sgxemu help CMD` */
	int (*main)(int argc, char **argv);	/* argv[0] is the command name */
};

/* The name used in messages: "sgxemu sign", or "sgxemu" before dispatch. */
void cli_set_command(const char *name);

/* "sgxemu CMD: <message>\n" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* cli_error() plus the pending OpenSSL error reason, if there is one. */
void cli_error_crypto(const char *what);

/* Print a command's usage text to @f. */
void cli_print_usage(const struct cli_command *cmd, FILE *f);

/*
 * Read a whole regular file (malloc'd; NUL-terminated for convenience) or
 * write one. Both report failures with cli_error() and return -1.
 */
int cli_read_file(const char *path, uint8_t **data, size_t *size);
int cli_write_file(const char *path, const void *data, size_t size);

/* Unsigned integer in C syntax (decimal, 0x hex, 0 octal) up to @max. */
bool cli_parse_uint(const char *s, uint64_t max, uint64_t *out);
/* Hexadecimal with or without 0x, up to 64 bits. */
bool cli_parse_hex(const char *s, uint64_t *out);

/* Lower-case hex of @n bytes in memory order. */
void cli_print_hex(FILE *f, const uint8_t *p, size_t n);

#endif /* SGXEMU_TOOLS_CLI_H */
