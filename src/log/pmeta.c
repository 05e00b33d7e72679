/*
 * log/pmeta.c - partition.metadata (see pmeta.h).
 */
#include "log/pmeta.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log/ckpt.h"
#include "util/diag.h"

static const char  pmeta_b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

void
samsa_pmeta_uuid_str(samsa_uuid_t u, char out[23])
{
    uint32_t  v;
    int       i, o = 0;

    for (i = 0; i < 15; i += 3) {
        v = (uint32_t) u.b[i] << 16 | (uint32_t) u.b[i + 1] << 8 | u.b[i + 2];
        out[o++] = pmeta_b64[v >> 18 & 63];
        out[o++] = pmeta_b64[v >> 12 & 63];
        out[o++] = pmeta_b64[v >> 6 & 63];
        out[o++] = pmeta_b64[v & 63];
    }
    out[o++] = pmeta_b64[u.b[15] >> 2];
    out[o++] = pmeta_b64[(u.b[15] & 3) << 4];
    out[o] = '\0';
}

static int
pmeta_b64_val(char c)
{
    const char  *p = c != '\0' ? strchr(pmeta_b64, c) : NULL;

    return p != NULL ? (int) (p - pmeta_b64) : -1;
}

bool
samsa_pmeta_uuid_parse(const char *s, samsa_uuid_t *u)
{
    int       i, o = 0, d[22];
    uint32_t  v;

    if (strlen(s) != 22) {
        return false;
    }
    for (i = 0; i < 22; i++) {
        if ((d[i] = pmeta_b64_val(s[i])) < 0) {
            return false;
        }
    }
    if ((d[21] & 15) != 0) {
        return false;               /* non-canonical trailing bits */
    }
    for (i = 0; i < 20; i += 4) {
        v = (uint32_t) d[i] << 18 | (uint32_t) d[i + 1] << 12
            | (uint32_t) d[i + 2] << 6 | (uint32_t) d[i + 3];
        u->b[o++] = (uint8_t) (v >> 16);
        u->b[o++] = (uint8_t) (v >> 8);
        u->b[o++] = (uint8_t) v;
    }
    u->b[15] = (uint8_t) (d[20] << 2 | d[21] >> 4);
    return true;
}

samsa_err_t
samsa_pmeta_write(const char *dir, samsa_uuid_t topic_id)
{
    char  path[PATH_MAX], text[64], id[23];
    int   len;

    snprintf(path, sizeof(path), "%s/partition.metadata", dir);
    samsa_pmeta_uuid_str(topic_id, id);
    len = snprintf(text, sizeof(text), "version: 0\ntopic_id: %s\n", id);
    return samsa_ckpt_write_atomic(path, text, (size_t) len);
}

samsa_err_t
samsa_pmeta_read(const char *dir, samsa_uuid_t *topic_id)
{
    char     path[PATH_MAX], text[128], id[32];
    ssize_t  n;
    int      fd;

    memset(topic_id, 0, sizeof(*topic_id));
    snprintf(path, sizeof(path), "%s/partition.metadata", dir);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            return SAMSA_ERR__NOENT;
        }
        samsa_error("log: cannot open %s: %s", path, strerror(errno));
        return SAMSA_ERR_KAFKA_STORAGE_ERROR;
    }
    n = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (n >= 0) {
        text[n] = '\0';
    }
    if (n < 0 || sscanf(text, "version: 0\ntopic_id: %31s", id) != 1
        || !samsa_pmeta_uuid_parse(id, topic_id)) {
        samsa_warn("log: malformed %s, ignoring it", path);
        return SAMSA_ERR__BAD_MSG;
    }
    return SAMSA_ERR_NONE;
}
