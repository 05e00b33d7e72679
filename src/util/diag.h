/*
 * util/diag.h - diagnostics: leveled lines on stderr with time, level and
 * thread name.  ("log" in Samsa means the commit log; this is diag.)
 * Also the formatting of error texts into a caller's errstr buffer.
 * Threads: any; each line is written with one write(2).
 */
#ifndef SAMSA_UTIL_DIAG_H
#define SAMSA_UTIL_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#define SAMSA_DIAG_MUST_CHECK  __attribute__((warn_unused_result))

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

/* Named loggers, as Kafka's Log4jController lists them for the
 * BROKER_LOGGER resource.  "root" is the diagnostics level above;
 * "kafka.request.logger" (Kafka's name) turns the request log on at
 * DEBUG or TRACE.  A logger other than root has its own level or, once
 * unset, follows root's (log4j's inheritance).  A logger may have an
 * enable hook, asked before a change leaves it at DEBUG or above: it
 * opens what the logger writes to, or refuses with a message. */
typedef enum samsa_diag_logger {
    SAMSA_DIAG_LOGGER_ROOT = 0,
    SAMSA_DIAG_LOGGER_REQUEST = 1,
    SAMSA_DIAG_NLOGGERS
} samsa_diag_logger_t;

typedef bool (*samsa_diag_enable_fn)(void *ctx, char *errstr,
                                     size_t errstr_size);

const char *samsa_diag_logger_name(samsa_diag_logger_t lg);
/* The logger named name (case-sensitive, as log4j): false if none. */
bool samsa_diag_logger_find(const char *name, samsa_diag_logger_t *out);
/* The level lg logs at now (its own, or root's). */
samsa_diag_level_t samsa_diag_logger_level(samsa_diag_logger_t lg);
bool samsa_diag_logger_enabled(samsa_diag_logger_t lg,
                               samsa_diag_level_t level);
/* Install lg's enable hook (main, before any thread is started). */
void samsa_diag_logger_hook(samsa_diag_logger_t lg, samsa_diag_enable_fn fn,
                            void *ctx);
/* Set lg's level, or with unset make it follow root (root cannot be
 * unset: false).  The hooks of the loggers the change leaves at DEBUG or
 * above are asked first; if one refuses, nothing changes and errstr says
 * why.  Changes are serialised. */
SAMSA_DIAG_MUST_CHECK bool samsa_diag_logger_update(
    samsa_diag_logger_t lg, bool unset, samsa_diag_level_t level,
    char *errstr, size_t errstr_size);

void samsa_diag(samsa_diag_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Explain a failure in the caller's (errstr, errstr_size) buffer, as the
 * functions that take one do; a NULL or empty buffer takes nothing. */
void samsa_diag_errstr(char *errstr, size_t errstr_size, const char *fmt,
                       ...) __attribute__((format(printf, 3, 4)));

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

/* Append fmt, formatted with ap (at most 511 characters of it), to the
 * text in errstr (errstr_size bytes, NUL-terminated unless errstr_size is
 * 0: then nothing is written), truncating to fit. */
void samsa_errstr_vappend(char *errstr, size_t errstr_size, const char *fmt,
                          va_list ap) __attribute__((format(printf, 3, 0)));

#endif /* SAMSA_UTIL_DIAG_H */
