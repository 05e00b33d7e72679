/*
 * meta/metaprops.c - see metaprops.h.  The file is written to a temporary
 * name, synced, renamed into place and the directory synced, so a crash
 * leaves either no file or a whole one.  Messages follow Kafka's
 * (MetaPropertiesEnsemble, Formatter) where Kafka has one.
 */
#include "meta/metaprops.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "meta/image.h"
#include "util/alloc.h"
#include "util/fsutil.h"
#include "util/props.h"

static const char  uuid_b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* Kafka's Uuid.randomUuid() text, made as topic ids are (meta/image.c). */
void
samsa_metaprops_random_id(char out[SAMSA_UUID_STR_SIZE])
{
    samsa_image_id_str(samsa_image_id_random(), out);
}

bool
samsa_metaprops_id_decode(const char *s, samsa_uuid_t *out)
{
    char         why[256];
    const char  *p;
    uint32_t     acc = 0;
    int          bits = 0;
    size_t       i, o = 0;

    memset(out, 0, sizeof(*out));
    if (!samsa_metaprops_id_valid(s, why, sizeof(why))) {
        return false;
    }
    for (i = 0; s[i] != '\0' && o < sizeof(out->b); i++) {
        p = strchr(uuid_b64, s[i]);
        acc = (acc << 6) | (uint32_t) (p - uuid_b64);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out->b[o++] = (uint8_t) (acc >> bits);
        }
    }
    return true;
}

bool
samsa_metaprops_id_valid(const char *s, char *why, size_t why_size)
{
    const char  *p;
    size_t       i, len = strlen(s);

    if (len != SAMSA_UUID_STR_SIZE - 1) {
        snprintf(why, why_size, "'%s' does not appear to be a valid UUID: "
                 "it has %zu characters, not 22 (URL-safe base64 of 16 "
                 "bytes)", s, len);
        return false;
    }
    for (i = 0; i < len; i++) {
        p = strchr(uuid_b64, s[i]);
        if (p == NULL) {
            snprintf(why, why_size, "'%s' does not appear to be a valid "
                     "UUID: '%c' is not a URL-safe base64 character", s,
                     s[i]);
            return false;
        }
        if (i == len - 1 && ((p - uuid_b64) & 0x0f) != 0) {
            snprintf(why, why_size, "'%s' does not appear to be a valid "
                     "UUID: it does not decode to 16 bytes", s);
            return false;
        }
    }
    if (strspn(s, "A") == len) {
        snprintf(why, why_size, "'%s' is the zero UUID, which is reserved",
                 s);
        return false;
    }
    return true;
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

/* What one meta.properties says (text as stored). */
typedef struct metaprops_file {
    char  cluster_id[SAMSA_UUID_STR_SIZE];
    char  node_id[16];
} metaprops_file_t;

/* Read and check the form of file into *mf. */
static samsa_err_t
metaprops_read(const char *file, metaprops_file_t *mf, char *errstr,
               size_t errstr_size)
{
    samsa_props_t  *props = samsa_props_new();
    samsa_err_t     err;
    const char     *v, *cid, *nid;
    char            why[256];

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
    } else if (cid == NULL || !samsa_metaprops_id_valid(cid, why,
                                                        sizeof(why))) {
        snprintf(errstr, errstr_size, "%s: missing or invalid cluster.id%s%s",
                 file, cid != NULL ? ": " : "", cid != NULL ? why : "");
    } else if (nid == NULL || nid[0] == '\0'
               || strlen(nid) >= sizeof(mf->node_id)
               || strspn(nid, "0123456789") != strlen(nid)) {
        snprintf(errstr, errstr_size, "%s: missing or invalid node.id '%s'",
                 file, nid != NULL ? nid : "");
    } else {
        snprintf(mf->cluster_id, sizeof(mf->cluster_id), "%s", cid);
        snprintf(mf->node_id, sizeof(mf->node_id), "%s", nid);
        err = SAMSA_ERR_NONE;
    }
out:
    samsa_props_free(props);
    return err;
}

static bool
metaprops_node_is(const metaprops_file_t *mf, int32_t node_id)
{
    char  text[16];

    snprintf(text, sizeof(text), "%d", (int) node_id);
    return strcmp(mf->node_id, text) == 0;
}

static samsa_err_t
metaprops_check(const char *file, int32_t node_id,
                char cluster_id[SAMSA_UUID_STR_SIZE], char *errstr,
                size_t errstr_size)
{
    metaprops_file_t  mf;
    samsa_err_t       err;

    err = metaprops_read(file, &mf, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    if (!metaprops_node_is(&mf, node_id)) {
        snprintf(errstr, errstr_size, "Stale or mismatched node.id: %s says "
                 "node.id %s, but the configuration says node.id %d. If you "
                 "moved your data, make sure your configured node id "
                 "matches; if you intend to create a new node, remove all "
                 "data in your data directories", file, mf.node_id,
                 (int) node_id);
        return SAMSA_ERR__CONFIG;
    }
    if (cluster_id[0] != '\0' && strcmp(cluster_id, mf.cluster_id) != 0) {
        snprintf(errstr, errstr_size, "Invalid cluster.id in: %s. Expected "
                 "%s, but read %s (the log dirs of one node must all belong "
                 "to one cluster)", file, cluster_id, mf.cluster_id);
        return SAMSA_ERR__CONFIG;
    }
    snprintf(cluster_id, SAMSA_UUID_STR_SIZE, "%s", mf.cluster_id);
    return SAMSA_ERR_NONE;
}

static samsa_err_t
metaprops_write(const char *dir, const char *file, int32_t node_id,
                const char *cluster_id, const char *dir_id, char *errstr,
                size_t errstr_size)
{
    char     tmp[4200], text[512], dirid[SAMSA_UUID_STR_SIZE];
    time_t   now = time(NULL);
    int      fd, n, dfd;

    if (dir_id != NULL) {
        snprintf(dirid, sizeof(dirid), "%s", dir_id);
    } else {
        samsa_metaprops_random_id(dirid);
    }
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
                       char cluster_id[SAMSA_UUID_STR_SIZE], bool may_format,
                       bool *formatted, char *errstr, size_t errstr_size)
{
    char         file[4096];
    samsa_err_t  err;

    *formatted = false;
    snprintf(file, sizeof(file), "%s/meta.properties", dir);
    if (access(file, F_OK) == 0) {
        return metaprops_check(file, node_id, cluster_id, errstr,
                               errstr_size);
    }
    if (!may_format) {
        snprintf(errstr, errstr_size, "No `meta.properties` found in %s "
                 "(have you run `samsa-server format` to format the "
                 "directory?)", dir);
        return SAMSA_ERR__CONFIG;
    }
    err = metaprops_mkdirs(dir, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    if (!metaprops_dir_empty(dir)) {
        snprintf(errstr, errstr_size, "log dir '%s' is not empty but has no "
                 "meta.properties; refusing to format it", dir);
        return SAMSA_ERR__CONFIG;
    }
    if (cluster_id[0] == '\0') {
        samsa_metaprops_random_id(cluster_id);
    }
    err = metaprops_write(dir, file, node_id, cluster_id, NULL, errstr,
                          errstr_size);
    *formatted = err == SAMSA_ERR_NONE;
    return err;
}

/* An already formatted dir, for format: skip it or say why not. */
static samsa_err_t
metaprops_format_existing(const char *dir, const char *file, int32_t node_id,
                          const char *cluster_id, bool ignore_formatted,
                          char *errstr, size_t errstr_size)
{
    metaprops_file_t  mf;
    samsa_err_t       err;

    if (!ignore_formatted) {
        snprintf(errstr, errstr_size, "Log directory %s is already "
                 "formatted. Use --ignore-formatted to ignore this directory "
                 "and format the others.", dir);
        return SAMSA_ERR__CONFIG;
    }
    err = metaprops_read(file, &mf, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    if (strcmp(mf.cluster_id, cluster_id) != 0) {
        snprintf(errstr, errstr_size, "Log directory %s is already formatted "
                 "for another cluster: %s says cluster.id %s, not %s", dir,
                 file, mf.cluster_id, cluster_id);
        return SAMSA_ERR__CONFIG;
    }
    if (!metaprops_node_is(&mf, node_id)) {
        snprintf(errstr, errstr_size, "Log directory %s is already formatted "
                 "for another node: %s says node.id %s, not %d", dir, file,
                 mf.node_id, (int) node_id);
        return SAMSA_ERR__CONFIG;
    }
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_metaprops_format(const char *dir, int32_t node_id,
                       const char *cluster_id, bool ignore_formatted,
                       bool *skipped, char *errstr, size_t errstr_size)
{
    return samsa_metaprops_format_id(dir, node_id, cluster_id, NULL,
                                     ignore_formatted, skipped, errstr,
                                     errstr_size);
}

samsa_err_t
samsa_metaprops_format_id(const char *dir, int32_t node_id,
                          const char *cluster_id, const char *dir_id,
                          bool ignore_formatted, bool *skipped, char *errstr,
                          size_t errstr_size)
{
    char         file[4096];
    samsa_err_t  err;

    *skipped = false;
    snprintf(file, sizeof(file), "%s/meta.properties", dir);
    if (access(file, F_OK) == 0) {
        err = metaprops_format_existing(dir, file, node_id, cluster_id,
                                        ignore_formatted, errstr,
                                        errstr_size);
        *skipped = err == SAMSA_ERR_NONE;
        return err;
    }
    err = metaprops_mkdirs(dir, errstr, errstr_size);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    if (!metaprops_dir_empty(dir)) {
        snprintf(errstr, errstr_size, "Log directory %s is not empty but has "
                 "no meta.properties; refusing to format it", dir);
        return SAMSA_ERR__CONFIG;
    }
    return metaprops_write(dir, file, node_id, cluster_id, dir_id, errstr,
                           errstr_size);
}
