# `make valgrind`: the CLI's tests with every sgxemu command under
# valgrind --leak-check=full (tests/valgrind/run.sh); fails on any
# valgrind error or definite leak. Not part of `make test` (about a
# minute, valgrind is slow).
.PHONY: valgrind
valgrind: $(ALL_TARGETS) seed-build
	@B=$(B) tests/valgrind/run.sh
