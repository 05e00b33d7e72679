/*
 * log/ckpt.c - Kafka's checkpoint files (see ckpt.h).  The parser is
 * strict: anything but the exact format is reported and ignored by the
 * caller, which then recovers conservatively.
 * Threads: any.
 */
#include "log/ckpt.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/buf.h"
#include "util/diag.h"
#include "util/fault.h"
#include "util/fsutil.h"

#define CKPT_MAX_BYTES (64 << 20)       /* far above any real checkpoint */

static samsa_err_t
ckpt_io_error(const char *what, const char *path, int err)
{
    samsa_error("log: %s %s: %s", what, path, strerror(err));
    return SAMSA_ERR_KAFKA_STORAGE_ERROR;
}

samsa_err_t
samsa_ckpt_fsync_dir(const char *dir)
{
    int  fd, err;

    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return ckpt_io_error("cannot open directory", dir, errno);
    }
    if (fsync(fd) != 0) {
        err = errno;
        close(fd);
        return ckpt_io_error("cannot fsync directory", dir, err);
    }
    close(fd);
    return SAMSA_ERR_NONE;
}

/* The directory part of path ("." if none), into dir. */
static void
ckpt_dirname(const char *path, char *dir, size_t size)
{
    const char  *slash = strrchr(path, '/');

    if (slash == NULL) {
        snprintf(dir, size, ".");
    } else if (slash == path) {
        snprintf(dir, size, "/");
    } else {
        snprintf(dir, size, "%.*s", (int) (slash - path), path);
    }
}

samsa_err_t
samsa_ckpt_write_atomic(const char *path, const void *data, size_t len)
{
    char  tmp[PATH_MAX], dir[PATH_MAX];
    int   fd, err;

    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return ckpt_io_error("cannot create", tmp, errno);
    }
    err = samsa_write_all(fd, data, len, -1);
    if (err == 0 && fdatasync(fd) != 0) {
        err = errno;
    }
    close(fd);
    if (err != 0) {
        unlink(tmp);
        return ckpt_io_error("cannot write", tmp, err);
    }
    SAMSA_FAULT("log.checkpoint.before_rename");
    if (rename(tmp, path) != 0) {
        err = errno;
        unlink(tmp);
        return ckpt_io_error("cannot rename to", path, err);
    }
    ckpt_dirname(path, dir, sizeof(dir));
    return samsa_ckpt_fsync_dir(dir);
}

/* Read all of path into a NUL-terminated heap buffer.  ENOENT -> *data
 * NULL and SAMSA_ERR_NONE. */
static samsa_err_t
ckpt_slurp(const char *path, char **data, size_t *len)
{
    samsa_buf_t  buf = SAMSA_BUF_INIT;
    ssize_t      n;
    int          fd, err = 0;

    *data = NULL;
    *len = 0;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return errno == ENOENT ? SAMSA_ERR_NONE
                               : ckpt_io_error("cannot open", path, errno);
    }
    for (;;) {
        n = read(fd, samsa_buf_reserve(&buf, 4096), 4096);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0 || buf.len + (size_t) n > CKPT_MAX_BYTES) {
            err = n < 0 ? errno : n > 0 ? EFBIG : 0;
            break;
        }
        buf.len += (size_t) n;
    }
    close(fd);
    if (err != 0) {
        samsa_buf_fini(&buf);
        return ckpt_io_error("cannot read", path, err);
    }
    samsa_buf_append(&buf, "", 1);
    *data = (char *) samsa_buf_take(&buf, len);
    (*len)--;
    return SAMSA_ERR_NONE;
}

/* A decimal integer in [lo, hi] ending at a separator; advances *s. */
static bool
ckpt_int(char **s, int64_t lo, int64_t hi, char sep, int64_t *v)
{
    char       *end;
    long long   x;

    if (**s == '\0' || **s == ' ' || **s == '\n') {
        return false;
    }
    errno = 0;
    x = strtoll(*s, &end, 10);
    if (errno != 0 || end == *s || *end != sep || x < lo || x > hi) {
        return false;
    }
    *v = x;
    *s = end + 1;
    return true;
}

/* The "0\n<count>\n" header; *count gets the count. */
static bool
ckpt_header(char **s, int64_t *count)
{
    int64_t  version;

    return ckpt_int(s, 0, 0, '\n', &version)
           && ckpt_int(s, 0, INT32_MAX, '\n', count);
}

static samsa_err_t
ckpt_malformed(const char *path, int64_t line)
{
    samsa_warn("log: malformed checkpoint file %s (line %" PRId64
               "), ignoring it", path, line);
    return SAMSA_ERR__BAD_MSG;
}

/* One entry line into elem; advances *s. */
typedef bool (*ckpt_line_fn)(char **s, void *elem);

/* One entry as a line (with its newline) into line; the length, as
 * snprintf's. */
typedef int (*ckpt_fmt_fn)(char *line, size_t size, const void *elems,
                           size_t i);

/* Read a checkpoint of count entries of size bytes, each parsed by
 * parse_line; a malformed file's partial entries go to fini (NULL:
 * samsa_free) with count + 1. */
static samsa_err_t
ckpt_read(const char *path, size_t size, ckpt_line_fn parse_line,
          void (*fini)(void *e, size_t n), void **out, size_t *n)
{
    char         *e, *data, *s;
    size_t        len;
    int64_t       count, i;
    samsa_err_t   err;

    *out = NULL;
    *n = 0;
    err = ckpt_slurp(path, &data, &len);
    if (err != SAMSA_ERR_NONE || data == NULL) {
        return err;
    }
    s = data;
    if (!ckpt_header(&s, &count) || (size_t) count > len) {
        err = ckpt_malformed(path, 1);
        goto out_free;
    }
    e = samsa_calloc((size_t) count + 1, size);
    for (i = 0; i < count && parse_line(&s, e + (size_t) i * size); i++) {
    }
    if (i != count || *s != '\0') {
        if (fini != NULL) {
            fini(e, (size_t) count + 1);
        } else {
            samsa_free(e);
        }
        err = ckpt_malformed(path, i + 3);
        goto out_free;
    }
    if (count == 0) {
        samsa_free(e);
        e = NULL;
    }
    *out = e;
    *n = (size_t) count;
out_free:
    samsa_free(data);
    return err;
}

/* Write the "0\n<n>\n" header and n entries formatted by fmt, atomically. */
static samsa_err_t
ckpt_write(const char *path, const void *elems, size_t n, ckpt_fmt_fn fmt)
{
    samsa_buf_t  buf = SAMSA_BUF_INIT;
    char         line[512];
    size_t       i;
    int          len;
    samsa_err_t  err;

    len = snprintf(line, sizeof(line), "0\n%zu\n", n);
    samsa_buf_append(&buf, line, (size_t) len);
    for (i = 0; i < n; i++) {
        len = fmt(line, sizeof(line), elems, i);
        samsa_buf_append(&buf, line, (size_t) len);
    }
    err = samsa_ckpt_write_atomic(path, buf.data, buf.len);
    samsa_buf_fini(&buf);
    return err;
}

/* One "<topic> <partition> <offset>\n" line into e; advances *s. */
static bool
ckpt_tp_line(char **s, void *elem)
{
    samsa_ckpt_tp_t  *e = elem;
    char             *sp = *s + strcspn(*s, " \n");
    int64_t           part, off;

    if (*sp != ' ' || sp == *s) {
        return false;
    }
    *sp = '\0';
    e->topic = samsa_strdup(*s);
    *s = sp + 1;
    if (!ckpt_int(s, 0, INT32_MAX, ' ', &part)
        || !ckpt_int(s, INT64_MIN, INT64_MAX, '\n', &off)) {
        return false;
    }
    e->partition = (int32_t) part;
    e->offset = off;
    return true;
}

static void
ckpt_tp_fini(void *e, size_t n)
{
    samsa_ckpt_tp_free(e, n);
}

static int
ckpt_tp_fmt(char *line, size_t size, const void *elems, size_t i)
{
    const samsa_ckpt_tp_t  *e = elems;

    return snprintf(line, size, "%s %" PRId32 " %" PRId64 "\n",
                    e[i].topic, e[i].partition, e[i].offset);
}

samsa_err_t
samsa_ckpt_tp_read(const char *path, samsa_ckpt_tp_t **out, size_t *n)
{
    void         *e;
    samsa_err_t   err;

    err = ckpt_read(path, sizeof(**out), ckpt_tp_line, ckpt_tp_fini, &e, n);
    *out = e;
    return err;
}

void
samsa_ckpt_tp_free(samsa_ckpt_tp_t *e, size_t n)
{
    size_t  i;

    if (e == NULL) {
        return;
    }
    for (i = 0; i < n; i++) {
        samsa_free(e[i].topic);
    }
    samsa_free(e);
}

samsa_err_t
samsa_ckpt_tp_write(const char *path, const samsa_ckpt_tp_t *e, size_t n)
{
    return ckpt_write(path, e, n, ckpt_tp_fmt);
}

/* One "<epoch> <start offset>\n" line into e; advances *s. */
static bool
ckpt_epoch_line(char **s, void *elem)
{
    samsa_ckpt_epoch_t  *e = elem;
    int64_t              epoch, off;

    if (!ckpt_int(s, 0, INT32_MAX, ' ', &epoch)
        || !ckpt_int(s, 0, INT64_MAX, '\n', &off)) {
        return false;
    }
    e->epoch = (int32_t) epoch;
    e->start_offset = off;
    return true;
}

static int
ckpt_epoch_fmt(char *line, size_t size, const void *elems, size_t i)
{
    const samsa_ckpt_epoch_t  *e = elems;

    return snprintf(line, size, "%" PRId32 " %" PRId64 "\n", e[i].epoch,
                    e[i].start_offset);
}

samsa_err_t
samsa_ckpt_epoch_read(const char *path, samsa_ckpt_epoch_t **out, size_t *n)
{
    void         *e;
    samsa_err_t   err;

    err = ckpt_read(path, sizeof(**out), ckpt_epoch_line, NULL, &e, n);
    *out = e;
    return err;
}

samsa_err_t
samsa_ckpt_epoch_write(const char *path, const samsa_ckpt_epoch_t *e,
                       size_t n)
{
    return ckpt_write(path, e, n, ckpt_epoch_fmt);
}
