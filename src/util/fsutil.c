/*
 * util/fsutil.c - see fsutil.h.
 */
#include "util/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
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

int
samsa_write_file_atomic(const char *path, const void *data, size_t len)
{
    size_t  plen = strlen(path);
    char   *tmp = samsa_malloc(plen + 5);
    char   *dir;
    int     fd, rc;

    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp", 5);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        rc = errno;
        samsa_free(tmp);
        return rc;
    }
    rc = samsa_write_all(fd, data, len, 0);
    if (rc == 0 && fsync(fd) != 0) {
        rc = errno;
    }
    if (close(fd) != 0 && rc == 0) {
        rc = errno;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        rc = errno;
    }
    if (rc != 0) {
        (void) unlink(tmp);
        samsa_free(tmp);
        return rc;
    }
    samsa_free(tmp);
    dir = samsa_strdup(path);
    fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void) fsync(fd);
        close(fd);
    }
    samsa_free(dir);
    return 0;
}

int
samsa_write_file_atomic_msg(const char *path, const void *data, size_t len,
                            char *errstr, size_t errstr_size)
{
    int  rc = samsa_write_file_atomic(path, data, len);

    if (rc != 0) {
        snprintf(errstr, errstr_size, "cannot write '%s': %s", path,
                 strerror(rc));
    }
    return rc;
}
