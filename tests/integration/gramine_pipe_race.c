/* SPDX-License-Identifier: MIT */
/*
 * Run under Gramine by test_gramine.sh, as Gramine's pipe_race test is
 * (issue 46, TC_80 test_093_pipe_race): WRITERS threads write LINES
 * lines each into one pipe while the main thread reads it to the end.
 * In SGX mode Gramine's pipes are TLS sessions, so every write and read
 * is an encrypted record and one or more OCALLs, from several threads
 * at once, each of which an AEX may interrupt while it builds its OCALL's
 * arguments. Prints the bytes and lines read per writer.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WRITERS	4
#define LINES	20000

static int fds[2];
static int finished;

static void *writer(void *arg)
{
	char line[32];
	int len = snprintf(line, sizeof(line), "writer %d\n", (int)(long)arg);

	for (int i = 0; i < LINES; i++)
		if (write(fds[1], line, (size_t)len) != len) {
			perror("write");
			exit(1);
		}
	if (__atomic_add_fetch(&finished, 1, __ATOMIC_SEQ_CST) == WRITERS)
		close(fds[1]);
	return NULL;
}

int main(void)
{
	static char buf[4096];
	long count[WRITERS] = { 0 }, bytes = 0;
	pthread_t t[WRITERS];
	char line[32];
	size_t have = 0;
	ssize_t n;
	int w;

	if (pipe(fds)) {
		perror("pipe");
		return 1;
	}
	for (long i = 0; i < WRITERS; i++)
		if (pthread_create(&t[i], NULL, writer, (void *)i)) {
			printf("pipe_race: pthread_create failed\n");
			return 1;
		}
	/* Lines may arrive split across reads: reassemble them. */
	while ((n = read(fds[0], buf, sizeof(buf))) > 0) {
		bytes += n;
		for (ssize_t i = 0; i < n; i++) {
			if (have < sizeof(line) - 1)
				line[have++] = buf[i];
			if (buf[i] != '\n')
				continue;
			line[have] = '\0';
			have = 0;
			if (sscanf(line, "writer %d", &w) == 1 && w >= 0 &&
			    w < WRITERS)
				count[w]++;
		}
	}
	if (n < 0) {
		perror("pipe_race: read");
		return 1;
	}
	for (int i = 0; i < WRITERS; i++)
		pthread_join(t[i], NULL);
	printf("pipe_race: %ld bytes\n", bytes);
	for (int i = 0; i < WRITERS; i++)
		printf("pipe_race: writer %d, %ld lines\n", i, count[i]);
	return 0;
}
