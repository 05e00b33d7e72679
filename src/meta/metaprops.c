/*
 * meta/metaprops.c - see metaprops.h.  The file is written to a temporary
 * name, synced, renamed into place and the directory synced, so a crash
 * leaves either no file or a whole one.
 */
#include "meta/metaprops.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "util/alloc.h"
#include "util/fsutil.h"
#include "util/props.h"

static const char  uuid_b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static void
uuid_to_str(const uint8_t b[16], char out[SAMSA_UUID_STR_SIZE])
{
    uint32_t  v;
    int       i, o = 0;

    for (i = 0; i < 15; i += 3) {
        v = (uint32_t) b[i] << 16 | (uint32_t) b[i + 1] << 8 | b[i + 2];
        out[o++] = uuid_b64[(v >> 18) & 63];
        out[o++] = uuid_b64[(v >> 12) & 63];
        out[o++] = uuid_b64[(v >> 6) & 63];
        out[o++] = uuid_b64[v & 63];
    }
    v = (uint32_t) b[15] << 16;
    out[o++] = uuid_b64[(v >> 18) & 63];
    out[o++] = uuid_b64[(v >> 12) & 63];
    out[o] = '\0';
}

/* A random (version 4) Kafka Uuid in Kafka's text form: URL-safe base64
 * without padding, never starting with '-'. */
static void
metaprops_uuid_random_str(char out[SAMSA_UUID_STR_SIZE])
{
    uint8_t  b[16];

    do {
        if (getrandom(b, sizeof(b), 0) != (ssize_t) sizeof(b)) {
            abort();                    /* no entropy: nothing sane to do */
        }
        b[6] = (uint8_t) ((b[6] & 0x0f) | 0x40);    /* version 4 */
        b[8] = (uint8_t) ((b[8] & 0x3f) | 0x80);    /* IETF variant */
        uuid_to_str(b, out);
    } while (out[0] == '-');
}

/* mkdir -p dir, naming it in errstr on failure. */
static samsa_err_t
metaprops_mkdirs(const char *dir, char *errstr, size_t errstr_size)
{
    int  rc = samsa_mkdirs(dir);

    if (rc != 0) {
        snprintf(errstr, errstr_size, "cannot create log dir '%s': %s", dir,
                 strerror(rc));
        return SAMSA_ERR__IO;
    }
    return SAMSA_ERR_NONE;
}

static bool
metaprops_dir_empty(const char *dir)
{
    DIR            *d = opendir(dir);
    struct dirent  *e;
    bool            empty = true;

    if (d == NULL) {
        return false;
    }
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0
            && strcmp(e->d_name, "meta.properties.tmp") != 0) {
            empty = false;
            break;
        }
    }
    closedir(d);
    return empty;
}

static samsa_err_t
metaprops_check(const char *file, int32_t node_id,
                char cluster_id[SAMSA_UUID_STR_SIZE], char *errstr,
                size_t errstr_size)
{
    samsa_props_t  *props = samsa_props_new();
    samsa_err_t     err;
    const char     *v, *cid, *nid;

    err = samsa_props_load_file(props, file, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        goto out;
    }
    err = SAMSA_ERR__CONFIG;
    v = samsa_props_get(props, "version");
    cid = samsa_props_get(props, "cluster.id");
    nid = samsa_props_get(props, "node.id");
    if (v == NULL || strcmp(v, "1") != 0) {
        snprintf(errstr, errstr_size, "%s: unsupported version '%s' "
                 "(expected 1)", file, v != NULL ? v : "(missing)");
    } else if (cid == NULL || strlen(cid) != SAMSA_UUID_STR_SIZE - 1) {
        snprintf(errstr, errstr_size, "%s: missing or invalid cluster.id",
                 file);
    } else if (nid == NULL || atoi(nid) != node_id) {
        snprintf(errstr, errstr_size, "%s: node.id %s does not match "
                 "node.id %d of the configuration", file,
                 nid != NULL ? nid : "(missing)", (int) node_id);
    } else if (cluster_id[0] != '\0' && strcmp(cluster_id, cid) != 0) {
        snprintf(errstr, errstr_size, "%s: cluster.id %s differs from "
                 "cluster.id %s of another log dir", file, cid, cluster_id);
    } else {
        snprintf(cluster_id, SAMSA_UUID_STR_SIZE, "%s", cid);
        err = SAMSA_ERR_NONE;
    }
out:
    samsa_props_free(props);
    return err;
}

static samsa_err_t
metaprops_write(const char *dir, const char *file, int32_t node_id,
                const char *cluster_id, char *errstr, size_t errstr_size)
{
    char     tmp[4200], text[512], dirid[SAMSA_UUID_STR_SIZE];
    time_t   now = time(NULL);
    int      fd, n, dfd;

    metaprops_uuid_random_str(dirid);
    n = snprintf(text, sizeof(text),
                 "#\n#%s"
                 "node.id=%d\ndirectory.id=%s\nversion=1\ncluster.id=%s\n",
                 ctime(&now), (int) node_id, dirid, cluster_id);
    snprintf(tmp, sizeof(tmp), "%s.tmp", file);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, text, (size_t) n) != n || fsync(fd) != 0) {
        snprintf(errstr, errstr_size, "cannot write '%s': %s", tmp,
                 strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return SAMSA_ERR__IO;
    }
    close(fd);
    if (rename(tmp, file) != 0) {
        snprintf(errstr, errstr_size, "cannot rename '%s' to '%s': %s", tmp,
                 file, strerror(errno));
        return SAMSA_ERR__IO;
    }
    dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_metaprops_ensure(const char *dir, int32_t node_id,
                       char cluster_id[SAMSA_UUID_STR_SIZE], bool *formatted,
                       char *errstr, size_t errstr_size)
{
    char         file[4096];
    samsa_err_t  err;

    *formatted = false;
    err = metaprops_mkdirs(dir, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    snprintf(file, sizeof(file), "%s/meta.properties", dir);
    if (access(file, F_OK) == 0) {
        return metaprops_check(file, node_id, cluster_id, errstr,
                               errstr_size);
    }
    if (!metaprops_dir_empty(dir)) {
        snprintf(errstr, errstr_size, "log dir '%s' is not empty but has no "
                 "meta.properties; refusing to format it", dir);
        return SAMSA_ERR__CONFIG;
    }
    if (cluster_id[0] == '\0') {
        metaprops_uuid_random_str(cluster_id);
    }
    err = metaprops_write(dir, file, node_id, cluster_id, errstr,
                          errstr_size);
    *formatted = err == SAMSA_ERR_NONE;
    return err;
}
