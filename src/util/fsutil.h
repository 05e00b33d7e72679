/*
 * util/fsutil.h - small file-system helpers shared by the storage and
 * metadata code.  Threads: any.
 */
#ifndef SAMSA_UTIL_FSUTIL_H
#define SAMSA_UTIL_FSUTIL_H

/* mkdir -p: create dir and its missing parents (mode 0755).  0, or the
 * errno of the first failure (an existing directory is no failure). */
int samsa_mkdirs(const char *dir);

#endif /* SAMSA_UTIL_FSUTIL_H */
