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

/* ---- named loggers ------------------------------------------------------ */

#define DIAG_INHERIT  (-1)

typedef struct diag_logger {
    const char            *name;
    _Atomic int            level;   /* DIAG_INHERIT: root's */
    samsa_diag_enable_fn   enable;
    void                  *enable_ctx;
} diag_logger_t;

/* root's own level is diag_level; its entry only names it.  The request
 * logger starts at WARN, as Kafka's log4j.properties sets it. */
static diag_logger_t  diag_loggers[SAMSA_DIAG_NLOGGERS] = {
    [SAMSA_DIAG_LOGGER_ROOT] = { "root", DIAG_INHERIT, NULL, NULL },
    [SAMSA_DIAG_LOGGER_REQUEST] = { "kafka.request.logger", SAMSA_DIAG_WARN,
                                    NULL, NULL },
};

static pthread_mutex_t  diag_update_lock = PTHREAD_MUTEX_INITIALIZER;

const char *
samsa_diag_logger_name(samsa_diag_logger_t lg)
{
    return (unsigned) lg < SAMSA_DIAG_NLOGGERS ? diag_loggers[lg].name : "?";
}

bool
samsa_diag_logger_find(const char *name, samsa_diag_logger_t *out)
{
    int  i;

    for (i = 0; i < SAMSA_DIAG_NLOGGERS; i++) {
        if (strcmp(diag_loggers[i].name, name) == 0) {
            *out = (samsa_diag_logger_t) i;
            return true;
        }
    }
    return false;
}

samsa_diag_level_t
samsa_diag_logger_level(samsa_diag_logger_t lg)
{
    int  level;

    if (lg == SAMSA_DIAG_LOGGER_ROOT || (unsigned) lg >= SAMSA_DIAG_NLOGGERS) {
        return samsa_diag_get_level();
    }
    level = atomic_load_explicit(&diag_loggers[lg].level,
                                 memory_order_relaxed);
    return level == DIAG_INHERIT ? samsa_diag_get_level()
                                 : (samsa_diag_level_t) level;
}

bool
samsa_diag_logger_enabled(samsa_diag_logger_t lg, samsa_diag_level_t level)
{
    return level <= samsa_diag_logger_level(lg);
}

void
samsa_diag_logger_hook(samsa_diag_logger_t lg, samsa_diag_enable_fn fn,
                       void *ctx)
{
    if ((unsigned) lg < SAMSA_DIAG_NLOGGERS) {
        diag_loggers[lg].enable = fn;
        diag_loggers[lg].enable_ctx = ctx;
    }
}

/* The level logger i would have after the change. */
static int
diag_level_after(int i, samsa_diag_logger_t lg, bool unset, int level)
{
    int  own, root;

    root = lg == SAMSA_DIAG_LOGGER_ROOT
               ? level
               : atomic_load_explicit(&diag_level, memory_order_relaxed);
    if (i == SAMSA_DIAG_LOGGER_ROOT) {
        return root;
    }
    own = i == (int) lg ? (unset ? DIAG_INHERIT : level)
                        : atomic_load_explicit(&diag_loggers[i].level,
                                               memory_order_relaxed);
    return own == DIAG_INHERIT ? root : own;
}

bool
samsa_diag_logger_update(samsa_diag_logger_t lg, bool unset,
                         samsa_diag_level_t level, char *errstr,
                         size_t errstr_size)
{
    int  i;

    if ((unsigned) lg >= SAMSA_DIAG_NLOGGERS
        || (unset && lg == SAMSA_DIAG_LOGGER_ROOT)) {
        snprintf(errstr, errstr_size, "the %s logger cannot be unset",
                 samsa_diag_logger_name(lg));
        return false;
    }
    pthread_mutex_lock(&diag_update_lock);
    for (i = 0; i < SAMSA_DIAG_NLOGGERS; i++) {
        if (diag_loggers[i].enable != NULL
            && diag_level_after(i, lg, unset, (int) level)
                   >= SAMSA_DIAG_DEBUG
            && !diag_loggers[i].enable(diag_loggers[i].enable_ctx, errstr,
                                       errstr_size)) {
            pthread_mutex_unlock(&diag_update_lock);
            return false;
        }
    }
    if (lg == SAMSA_DIAG_LOGGER_ROOT) {
        samsa_diag_set_level(level);
    } else {
        atomic_store_explicit(&diag_loggers[lg].level,
                              unset ? DIAG_INHERIT : (int) level,
                              memory_order_relaxed);
    }
    pthread_mutex_unlock(&diag_update_lock);
    return true;
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
samsa_diag_errstr(char *errstr, size_t errstr_size, const char *fmt, ...)
{
    va_list  ap;

    if (errstr != NULL && errstr_size > 0) {
        va_start(ap, fmt);
        vsnprintf(errstr, errstr_size, fmt, ap);
        va_end(ap);
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

void
samsa_errstr_vappend(char *errstr, size_t errstr_size, const char *fmt,
                     va_list ap)
{
    char    what[512];
    size_t  len;

    if (errstr_size == 0) {
        return;
    }
    len = strlen(errstr);
    vsnprintf(what, sizeof(what), fmt, ap);
    snprintf(errstr + len, errstr_size - len, "%s", what);
}
