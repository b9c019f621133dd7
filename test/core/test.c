/*
 * test.c — runs a table of tests (see test.h).
 */
#include <stdio.h>
#include <string.h>

#include "test.h"

int			test_failures;

int
run_tests(const TestCase *tests, int n, const char *filter, int *passed, int *failed)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		if (filter != NULL && strstr(tests[i].name, filter) == NULL)
			continue;
		test_failures = 0;
		tests[i].run();
		if (test_failures == 0)
		{
			(*passed)++;
			printf("ok     %s\n", tests[i].name);
		}
		else
		{
			(*failed)++;
			printf("FAILED %s (%d checks)\n", tests[i].name, test_failures);
		}
		fflush(stdout);
	}
	return *failed;
}
