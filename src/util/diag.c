/*
 * util/diag.c - see diag.h.
 * Threads: any; the level is an atomic, each line one write(2).
 */
#include "util/diag.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static _Atomic int  diag_level = SAMSA_DIAG_INFO;

static const char *const diag_names[] = {
    "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE",
};

void
samsa_diag_set_level(samsa_diag_level_t level)
{
    atomic_store_explicit(&diag_level, (int) level, memory_order_relaxed);
}

bool
samsa_diag_enabled(samsa_diag_level_t level)
{
    return (int) level
           <= atomic_load_explicit(&diag_level, memory_order_relaxed);
}

samsa_diag_level_t
samsa_diag_get_level(void)
{
    return (samsa_diag_level_t) atomic_load_explicit(&diag_level,
                                                     memory_order_relaxed);
}

bool
samsa_diag_level_parse(const char *name, samsa_diag_level_t *out)
{
    size_t  i;

    for (i = 0; i < sizeof(diag_names) / sizeof(diag_names[0]); i++) {
        if (strcasecmp(name, diag_names[i]) == 0) {
            *out = (samsa_diag_level_t) i;
            return true;
        }
    }
    return false;
}

const char *
samsa_diag_level_name(samsa_diag_level_t level)
{
    return (unsigned) level < sizeof(diag_names) / sizeof(diag_names[0])
               ? diag_names[level]
               : "?";
}

void
samsa_diag(samsa_diag_level_t level, const char *fmt, ...)
{
    char             line[2048];
    char             tname[16] = "?";
    struct timespec  ts;
    struct tm        tm;
    va_list          ap;
    int              n, m;

    if (!samsa_diag_enabled(level)) {
        return;
    }
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    prctl(PR_GET_NAME, tname, 0, 0, 0);
    n = snprintf(line, sizeof(line),
                 "[%04d-%02d-%02d %02d:%02d:%02d,%03ld] %-5s [%s] ",
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                 tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
                 diag_names[level], tname);
    va_start(ap, fmt);
    m = vsnprintf(line + n, sizeof(line) - (size_t) n - 1, fmt, ap);
    va_end(ap);
    if (m < 0) {
        m = 0;
    }
    n += m;
    if ((size_t) n > sizeof(line) - 2) {
        n = (int) sizeof(line) - 2;
    }
    line[n++] = '\n';
    if (write(STDERR_FILENO, line, (size_t) n) < 0) {
        /* nowhere left to report it */
    }
}

void
samsa_assert_fail(const char *what, const char *file, int line)
{
    samsa_diag(SAMSA_DIAG_FATAL, "BUG: assertion failed: %s at %s:%d", what,
               file, line);
    abort();
}

void
samsa_thread_name_set(const char *name)
{
    char  buf[16];

    snprintf(buf, sizeof(buf), "%s", name);
    pthread_setname_np(pthread_self(), buf);
}
