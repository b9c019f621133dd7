/*
 * core_unit.c — runs the unit tests of the scheduling core: one per rule of
 * docs/scheduling.md (rules.c), the victim order (victims.c) and the six
 * reference scenarios (scenarios.c).
 *
 * Usage: core_unit [name-filter]
 * Prints one line per test and ends with "N passed, M failed".
 */
#include <stdio.h>

#include "tests.h"

int
main(int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : NULL;
	int			passed = 0;
	int			failed = 0;

	run_tests(scenario_tests, n_scenario_tests, filter, &passed, &failed);
	run_tests(rule_tests, n_rule_tests, filter, &passed, &failed);
	run_tests(victim_tests, n_victim_tests, filter, &passed, &failed);
	printf("%d passed, %d failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}
