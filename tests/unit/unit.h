/*
 * tests/unit/unit.h - cmocka and the libc headers it needs, for every unit
 * test binary (one per source file: tests/unit/<dir>/test_<file>.c).
 */
#ifndef SAMSA_TESTS_UNIT_H
#define SAMSA_TESTS_UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#endif /* SAMSA_TESTS_UNIT_H */
