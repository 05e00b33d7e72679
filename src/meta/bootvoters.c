/*
 * meta/bootvoters.c - see bootvoters.h.
 */
#include "meta/bootvoters.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/buf.h"
#include "util/fsutil.h"
#include "util/props.h"

#define BOOTVOTERS_KEY "initial.controllers"

samsa_err_t
samsa_bootvoters_write(const char *mdir, const samsa_config_voter_t *voters,
                       size_t n, char *errstr, size_t errstr_size)
{
    samsa_buf_t  text = SAMSA_BUF_INIT;
    char         file[4096], line[1024];
    size_t       i;
    int          rc;
    bool         v6;

    snprintf(file, sizeof(file), "%s/" SAMSA_BOOTVOTERS_FILE, mdir);
    snprintf(line, sizeof(line), "# the initial voters of this dynamic "
             "quorum (KIP-853), written by samsa-server format\n"
             BOOTVOTERS_KEY "=");
    (void) samsa_buf_append(&text, line, strlen(line));
    for (i = 0; i < n; i++) {
        v6 = strchr(voters[i].addr.host, ':') != NULL;
        snprintf(line, sizeof(line), "%s%d@%s%s%s:%d%s%s", i > 0 ? "," : "",
                 (int) voters[i].id, v6 ? "[" : "", voters[i].addr.host,
                 v6 ? "]" : "", voters[i].addr.port,
                 voters[i].dir_id[0] != '\0' ? ":" : "", voters[i].dir_id);
        (void) samsa_buf_append(&text, line, strlen(line));
    }
    (void) samsa_buf_append(&text, "\n", 1);
    rc = samsa_write_file_atomic_msg(file, text.data, text.len, errstr,
                                     errstr_size);
    samsa_buf_fini(&text);
    return rc != 0 ? SAMSA_ERR__IO : SAMSA_ERR_NONE;
}

samsa_err_t
samsa_bootvoters_read(const char *mdir, samsa_config_voter_t **voters,
                      size_t *n, char *errstr, size_t errstr_size)
{
    samsa_props_t  *props;
    const char     *text;
    char            file[4096], why[512];
    samsa_err_t     err;

    *voters = NULL;
    *n = 0;
    snprintf(file, sizeof(file), "%s/" SAMSA_BOOTVOTERS_FILE, mdir);
    if (access(file, F_OK) != 0) {
        snprintf(errstr, errstr_size, "No %s in %s: the node has "
                 "controller.quorum.bootstrap.servers and no "
                 "controller.quorum.voters (a dynamic quorum); format it "
                 "with `samsa-server format --standalone`, "
                 "--initial-controllers or --no-initial-controllers",
                 SAMSA_BOOTVOTERS_FILE, mdir);
        return SAMSA_ERR__NOENT;
    }
    props = samsa_props_new();
    err = samsa_props_load_file(props, file, errstr, errstr_size);
    if (err == SAMSA_ERR_NONE) {
        if ((text = samsa_props_get(props, BOOTVOTERS_KEY)) == NULL) {
            snprintf(errstr, errstr_size, "%s: no %s", file, BOOTVOTERS_KEY);
            err = SAMSA_ERR__CONFIG;
        } else if (samsa_config_initial_voters_parse(text, false, voters, n,
                                                     why, sizeof(why))
                   != SAMSA_ERR_NONE) {
            snprintf(errstr, errstr_size, "%s: %s", file, why);
            err = SAMSA_ERR__CONFIG;
        }
    }
    samsa_props_free(props);
    return err;
}
