/*
 * util/fsutil.c - see fsutil.h.
 */
#include "util/fsutil.h"

#include <errno.h>
#include <sys/stat.h>

#include "util/alloc.h"

int
samsa_mkdirs(const char *dir)
{
    char  *path = samsa_strdup(dir);
    char  *p, c;
    int    rc = 0;

    for (p = path + 1; rc == 0; p++) {
        if (*p != '/' && *p != '\0') {
            continue;
        }
        c = *p;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST) {
            rc = errno;
        }
        *p = c;
        if (c == '\0') {
            break;
        }
    }
    samsa_free(path);
    return rc;
}
