/*
 * util/diag.h - diagnostics: leveled lines on stderr with time, level and
 * thread name.  ("log" in Samsa means the commit log; this is diag.)
 * Threads: any; each line is written with one write(2).
 */
#ifndef SAMSA_UTIL_DIAG_H
#define SAMSA_UTIL_DIAG_H

#include <stdbool.h>

/* log4j's levels.  FATAL is a line before the process aborts (an
 * assertion); Samsa writes no TRACE lines, so TRACE shows what DEBUG
 * does. */
typedef enum samsa_diag_level {
    SAMSA_DIAG_FATAL = 0,
    SAMSA_DIAG_ERROR = 1,
    SAMSA_DIAG_WARN  = 2,
    SAMSA_DIAG_INFO  = 3,
    SAMSA_DIAG_DEBUG = 4,
    SAMSA_DIAG_TRACE = 5,
} samsa_diag_level_t;

/* Lines above level are dropped.  Default INFO. */
void samsa_diag_set_level(samsa_diag_level_t level);
bool samsa_diag_enabled(samsa_diag_level_t level);
samsa_diag_level_t samsa_diag_get_level(void);

/* "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE" (log4j's names;
 * case-insensitive) to a level: false for anything else. */
bool samsa_diag_level_parse(const char *name, samsa_diag_level_t *out);
const char *samsa_diag_level_name(samsa_diag_level_t level);

void samsa_diag(samsa_diag_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define samsa_error(...) samsa_diag(SAMSA_DIAG_ERROR, __VA_ARGS__)
#define samsa_warn(...)  samsa_diag(SAMSA_DIAG_WARN, __VA_ARGS__)
#define samsa_info(...)  samsa_diag(SAMSA_DIAG_INFO, __VA_ARGS__)
#define samsa_debug(...)                                  \
    do {                                                  \
        if (samsa_diag_enabled(SAMSA_DIAG_DEBUG)) {       \
            samsa_diag(SAMSA_DIAG_DEBUG, __VA_ARGS__);    \
        }                                                 \
    } while (0)

/* Our invariants (never peer input): always on, reports and aborts. */
#define samsa_assert(cond)                                              \
    do {                                                                \
        if (!(cond)) {                                                  \
            samsa_assert_fail(#cond, __FILE__, __LINE__);               \
        }                                                               \
    } while (0)

void samsa_assert_fail(const char *what, const char *file, int line)
    __attribute__((noreturn));

/* Set the calling thread's name (at most 15 characters are kept). */
void samsa_thread_name_set(const char *name);

#endif /* SAMSA_UTIL_DIAG_H */
