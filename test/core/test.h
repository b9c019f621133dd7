/*
 * test.h — a minimal test harness for the core's C tests.
 *
 * A test is a function; CHECK* macros record failures in the current test
 * and print where and why.  run_tests() runs a table of tests and prints
 * one line per test and the total as "N passed, M failed".
 */
#ifndef FS_TEST_H
#define FS_TEST_H

#include <stdio.h>
#include <string.h>

extern int	test_failures;		/* in the current test */

#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			test_failures++; \
			printf("    FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		} \
	} while (0)

#define CHECK_EQ(a, b) \
	do { \
		long long check_a_ = (long long) (a), check_b_ = (long long) (b); \
		if (check_a_ != check_b_) { \
			test_failures++; \
			printf("    FAILED %s:%d: %s == %s (%lld != %lld)\n", \
				   __FILE__, __LINE__, #a, #b, check_a_, check_b_); \
		} \
	} while (0)

#define CHECK_CONTAINS(text, part) \
	do { \
		const char *check_t_ = (text), *check_p_ = (part); \
		if (check_t_ == NULL || strstr(check_t_, check_p_) == NULL) { \
			test_failures++; \
			printf("    FAILED %s:%d: \"%s\" does not contain \"%s\"\n", \
				   __FILE__, __LINE__, check_t_ ? check_t_ : "(null)", check_p_); \
		} \
	} while (0)

typedef struct TestCase
{
	const char *name;
	void		(*run) (void);
} TestCase;

extern int	run_tests(const TestCase *tests, int n, const char *filter, int *passed, int *failed);

#endif
