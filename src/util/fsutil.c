/*
 * util/fsutil.c - see fsutil.h.
 */
#include "util/fsutil.h"

#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

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

int
samsa_write_all(int fd, const void *p, size_t len, off_t pos)
{
    const uint8_t  *b = p;
    ssize_t         n;

    while (len > 0) {
        n = pos >= 0 ? pwrite(fd, b, len, pos) : write(fd, b, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return n < 0 ? errno : ENOSPC;
        }
        b += n;
        len -= (size_t) n;
        if (pos >= 0) {
            pos += n;
        }
    }
    return 0;
}

void
samsa_close_fd(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}
