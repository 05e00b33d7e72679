/*
 * util/fsutil.h - small file-system and file-descriptor helpers shared
 * by the storage, metadata and network code.  Threads: any.
 */
#ifndef SAMSA_UTIL_FSUTIL_H
#define SAMSA_UTIL_FSUTIL_H

#include <stddef.h>
#include <sys/types.h>

/* mkdir -p: create dir and its missing parents (mode 0755).  0, or the
 * errno of the first failure (an existing directory is no failure). */
int samsa_mkdirs(const char *dir);

/* Write all len bytes of p to fd: at pos (pwrite) when pos >= 0, else at
 * the file's position (write); retried on EINTR and short writes.  0, or
 * the errno of the failed write (ENOSPC for a write that takes no bytes,
 * a full device). */
int samsa_write_all(int fd, const void *p, size_t len, off_t pos);

/* Replace the file at path with len bytes of data, atomically and
 * durably: written to path.tmp (mode 0600), fsynced, renamed over path,
 * the directory fsynced.  0, or the errno of the failure (path.tmp is
 * removed). */
int samsa_write_file_atomic(const char *path, const void *data, size_t len);

/* samsa_write_file_atomic, the failure also said in errstr ("cannot write
 * '<path>': <strerror>") for an operator.  0, or the errno. */
int samsa_write_file_atomic_msg(const char *path, const void *data,
                                size_t len, char *errstr,
                                size_t errstr_size);

/* Close *fd if it is open (>= 0) and mark it closed (-1). */
void samsa_close_fd(int *fd);

#endif /* SAMSA_UTIL_FSUTIL_H */
