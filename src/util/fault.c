/*
 * util/fault.c - see fault.h.  Compiled only into the fault-point build.
 */
#ifdef SAMSA_FAULT_POINTS

#include "util/fault.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_once_t   fault_once = PTHREAD_ONCE_INIT;
static char             fault_name[128];    /* "" when none is armed */
static long             fault_nth = 1;
static _Atomic long     fault_passes;

static void
fault_init(void)
{
    const char  *env = getenv("SAMSA_FAULT");
    const char  *colon;
    size_t       len;

    if (env == NULL || *env == '\0') {
        return;
    }
    colon = strchr(env, ':');
    len = colon != NULL ? (size_t) (colon - env) : strlen(env);
    if (len >= sizeof(fault_name)) {
        len = sizeof(fault_name) - 1;
    }
    memcpy(fault_name, env, len);
    fault_name[len] = '\0';
    if (colon != NULL) {
        fault_nth = strtol(colon + 1, NULL, 10);
        if (fault_nth < 1) {
            fault_nth = 1;
        }
    }
}

void
samsa_fault_point(const char *name)
{
    char  line[192];
    int   n;

    pthread_once(&fault_once, fault_init);
    if (fault_name[0] == '\0' || strcmp(name, fault_name) != 0) {
        return;
    }
    if (atomic_fetch_add(&fault_passes, 1) + 1 != fault_nth) {
        return;
    }
    n = snprintf(line, sizeof(line), "samsa-server: fault point %s (pass "
                 "%ld): SIGKILL\n", name, fault_nth);
    if (n > 0 && write(STDERR_FILENO, line, (size_t) n) < 0) {
        /* nothing to do: we are about to die */
    }
    kill(getpid(), SIGKILL);
    pause();
}

long
samsa_fault_hook(const char *env_name, long dflt)
{
    const char  *v = getenv(env_name);
    char        *end;
    long         n;

    if (v == NULL || *v == '\0') {
        return dflt;
    }
    n = strtol(v, &end, 10);
    return *end == '\0' ? n : dflt;
}

#else
typedef int samsa_fault_unused_t;   /* ISO C: no empty translation unit */
#endif
