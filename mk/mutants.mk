# `make mutants`: the mutation check of the suite (scripts/mutants.sh, the
# mutants in tests/mutants/mutants.txt): each single-line mutant of a rule
# built in a scratch copy (build/mutants) and the tests that should notice
# run against it; prints killed/survived and the kill rate. Not part of
# `make test`; bounded to about 20 minutes on 2 cores.

.PHONY: mutants
mutants: $(ALL_TARGETS) $(TESTS) $(TEST_DEPS)
	@scripts/mutants.sh
