/* SPDX-License-Identifier: MIT */
/*
 * Run under Gramine with EDMM by test_gramine.sh: an anonymous
 * MAP_NORESERVE mapping, touched page by page (reads first, then writes),
 * as Gramine's own regression test does. Under EDMM Gramine commits such
 * pages lazily: the first touch faults inside the enclave, and its
 * exception handler EACCEPTs the page. Prints what it read and wrote.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define SIZE	(16UL << 20)
#define PAGE	4096UL

int main(void)
{
	unsigned char *p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				-1, 0);
	unsigned long sum = 0;

	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (unsigned long off = 0; off < SIZE; off += 64 * PAGE)
		sum += p[off];
	printf("noreserve: read %lu\n", sum);
	for (unsigned long off = 0; off < SIZE; off += PAGE)
		p[off] = (unsigned char)(off / PAGE);
	sum = 0;
	for (unsigned long off = 0; off < SIZE; off += PAGE)
		sum += p[off];
	printf("noreserve: written %lu\n", sum);
	munmap(p, SIZE);
	return 0;
}
