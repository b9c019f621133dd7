/*
 * tests.h — the test tables of the unit test program.
 */
#ifndef FS_TESTS_H
#define FS_TESTS_H

#include "test.h"

extern const TestCase scenario_tests[];
extern const int n_scenario_tests;
extern const TestCase rule_tests[];
extern const int n_rule_tests;
extern const TestCase victim_tests[];
extern const int n_victim_tests;

#endif
