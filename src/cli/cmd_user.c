/*
 * cli/cmd_user.c - "samsa user scram set|list|delete": users' SCRAM
 * credentials (KIP-554) through libsamsa's admin client
 * (AlterUserScramCredentials, DescribeUserScramCredentials), what
 * kafka-configs --entity-type users --alter --add-config
 * 'SCRAM-SHA-256=[...]' and --describe do.
 * Threads: main.
 */
#include <stdio.h>
#include <string.h>

#include <samsa/admin.h>

#include "cli/cli.h"
#include "cli/json.h"
#include "cli/session.h"
#include "cli/table.h"

/* --mechanism's value as a type code; 0 (after a usage message) if it is
 * none of Kafka's two. */
static int8_t
user_mechanism(samsa_session_t *s, int *rc)
{
    const char  *m = samsa_opts_get(&s->opts, "--mechanism");

    if (m == NULL) {
        *rc = samsa_session_usage(s, "missing --mechanism (SCRAM-SHA-256 or "
                                  "SCRAM-SHA-512)");
        return 0;
    }
    if (strcmp(m, "SCRAM-SHA-256") == 0) {
        return SAMSA_SCRAM_MECHANISM_SHA_256;
    }
    if (strcmp(m, "SCRAM-SHA-512") == 0) {
        return SAMSA_SCRAM_MECHANISM_SHA_512;
    }
    *rc = samsa_session_usage(s, "--mechanism: '%s' is not SCRAM-SHA-256 "
                              "or SCRAM-SHA-512", m);
    return 0;
}

/* One line (or JSON object) per user of an alteration's result. */
static int
user_items_report(samsa_session_t *s, const samsa_admin_items_t *res,
                  const char *done, const char *mech)
{
    samsa_json_t  j;
    size_t        i;
    int           rc = SAMSA_EXIT_OK;

    samsa_session_list(s, &j);
    for (i = 0; i < res->n; i++) {
        const samsa_admin_item_t  *it = &res->items[i];

        if (it->err != SAMSA_ERR_NONE) {
            rc = SAMSA_EXIT_FAILED;
            fprintf(stderr, "%s: user '%s': %s: %s\n", s->cmd, it->name,
                    samsa_err_name(it->err), it->errmsg);
        }
        if (s->json) {
            samsa_json_obj(&j);
            samsa_json_kv_str(&j, "user", it->name);
            samsa_json_kv_str(&j, "mechanism", mech);
            samsa_json_kv_bool(&j, "ok", it->err == SAMSA_ERR_NONE);
            samsa_session_json_err(&j, it->err);
            samsa_json_kv_str(&j, "message", it->errmsg);
            samsa_json_obj_end(&j);
        } else if (it->err == SAMSA_ERR_NONE) {
            printf("%s %s credential of user '%s'.\n", done, mech, it->name);
        }
    }
    samsa_session_list_end(s, &j, NULL);
    return rc;
}

/* ---- set ---------------------------------------------------------------- */

static const samsa_opt_t  user_set_opts[] = {
    { "--mechanism", 'm', SAMSA_OPT_VALUE, "MECH",
      "SCRAM-SHA-256 or SCRAM-SHA-512" },
    { "--password", 0, SAMSA_OPT_VALUE, "PW",
      "the user's password (salted here: only the salted form is sent)" },
    { "--iterations", 'i', SAMSA_OPT_VALUE, "N",
      "PBKDF2 iterations, 4096..16384 (default 4096)" },
    { NULL, 0, SAMSA_OPT_FLAG, NULL, NULL },
};

static int
user_scram_set(int argc, char **argv)
{
    samsa_session_t                s;
    samsa_user_scram_alteration_t  alt;
    samsa_admin_items_t           *res = NULL;
    samsa_err_t                    e;
    int64_t                        iters;
    char                           why[256];
    int                            rc;

    rc = samsa_session_parse(&s, "samsa user scram set",
                             "samsa user scram set USER --mechanism MECH "
                             "--password PW [options]",
                             "Create or replace a user's SCRAM credential "
                             "(AlterUserScramCredentials): the client draws "
                             "a random salt and sends the salted password, "
                             "as Kafka's Admin does.",
                             user_set_opts, argc, argv, 1, 1);
    if (rc >= 0) {
        samsa_session_close(&s);
        return rc;
    }
    memset(&alt, 0, sizeof(alt));
    alt.user = s.opts.pos[0];
    alt.mechanism = user_mechanism(&s, &rc);
    alt.password = samsa_opts_get(&s.opts, "--password");
    if (alt.mechanism != 0 && alt.password == NULL) {
        rc = samsa_session_usage(&s, "missing --password");
    } else if (alt.mechanism != 0
               && samsa_opts_i64(&s.opts, "--iterations",
                                 SAMSA_SCRAM_ITERATIONS_MIN,
                                 SAMSA_SCRAM_ITERATIONS_MAX,
                                 SAMSA_SCRAM_ITERATIONS_DEFAULT, &iters, why,
                                 sizeof(why)) != 0) {
        rc = samsa_session_usage(&s, "%s", why);
    } else if (alt.mechanism != 0 && alt.user[0] == '\0') {
        rc = samsa_session_usage(&s, "empty user name");
    } else if (alt.mechanism != 0) {
        alt.iterations = (int32_t) iters;
        rc = samsa_session_connect(&s);
    }
    if (alt.mechanism == 0 || rc != SAMSA_EXIT_OK) {
        samsa_session_close(&s);
        return rc;
    }
    e = samsa_admin_alter_user_scram_credentials(s.admin, &alt, 1,
                                                 s.timeout_ms, &res);
    if (e != SAMSA_ERR_NONE) {
        rc = samsa_session_fail(&s, e, "cannot set the credential");
    } else {
        rc = user_items_report(&s, res, "Set",
                               samsa_admin_scram_mechanism_name(
                                   alt.mechanism));
    }
    samsa_admin_result_free(res);
    samsa_session_close(&s);
    return rc;
}

/* ---- delete ------------------------------------------------------------- */

static const samsa_opt_t  user_delete_opts[] = {
    { "--mechanism", 'm', SAMSA_OPT_VALUE, "MECH",
      "SCRAM-SHA-256 or SCRAM-SHA-512" },
    { NULL, 0, SAMSA_OPT_FLAG, NULL, NULL },
};

static int
user_scram_delete(int argc, char **argv)
{
    samsa_session_t                s;
    samsa_user_scram_alteration_t  alt;
    samsa_admin_items_t           *res = NULL;
    samsa_err_t                    e;
    int                            rc;

    rc = samsa_session_parse(&s, "samsa user scram delete",
                             "samsa user scram delete USER --mechanism MECH "
                             "[options]",
                             "Remove a user's SCRAM credential for one "
                             "mechanism (AlterUserScramCredentials).",
                             user_delete_opts, argc, argv, 1, 1);
    if (rc >= 0) {
        samsa_session_close(&s);
        return rc;
    }
    memset(&alt, 0, sizeof(alt));
    alt.user = s.opts.pos[0];
    alt.is_delete = true;
    alt.mechanism = user_mechanism(&s, &rc);
    if (alt.mechanism == 0 || (rc = samsa_session_connect(&s))
                                  != SAMSA_EXIT_OK) {
        samsa_session_close(&s);
        return rc;
    }
    e = samsa_admin_alter_user_scram_credentials(s.admin, &alt, 1,
                                                 s.timeout_ms, &res);
    if (e != SAMSA_ERR_NONE) {
        rc = samsa_session_fail(&s, e, "cannot delete the credential");
    } else {
        rc = user_items_report(&s, res, "Deleted",
                               samsa_admin_scram_mechanism_name(
                                   alt.mechanism));
    }
    samsa_admin_result_free(res);
    samsa_session_close(&s);
    return rc;
}

/* ---- list --------------------------------------------------------------- */

static void
user_list_json(samsa_json_t *j, const samsa_user_scram_desc_t *d)
{
    size_t  i;

    samsa_json_obj(j);
    samsa_json_kv_str(j, "user", d->user);
    samsa_session_json_err(j, d->err);
    samsa_json_kv_str(j, "message", d->errmsg);
    samsa_json_key(j, "credentials");
    samsa_json_arr(j);
    for (i = 0; i < d->ninfos; i++) {
        samsa_json_obj(j);
        samsa_json_kv_str(j, "mechanism", samsa_admin_scram_mechanism_name(
                                              d->infos[i].mechanism));
        samsa_json_kv_int(j, "mechanism_type", d->infos[i].mechanism);
        samsa_json_kv_int(j, "iterations", d->infos[i].iterations);
        samsa_json_obj_end(j);
    }
    samsa_json_arr_end(j);
    samsa_json_obj_end(j);
}

static int
user_scram_list(int argc, char **argv)
{
    static const char *const   hdr[] = { "USER", "MECHANISM", "ITERATIONS" };
    samsa_session_t            s;
    samsa_user_scram_descs_t  *res = NULL;
    samsa_table_t             *t = NULL;
    samsa_json_t               j;
    samsa_err_t                e;
    const char                *mech;
    size_t                     i, k;
    int                        rc;

    if (!samsa_session_open(&s, &rc, "samsa user scram list",
                            "samsa user scram list [USER...] [options]",
                            "The users' SCRAM mechanisms and iteration "
                            "counts (DescribeUserScramCredentials); every "
                            "user with a credential when none is named.  "
                            "Exit 1 when a named user has none.",
                            NULL, argc, argv, 0, SIZE_MAX)) {
        return rc;
    }
    e = samsa_admin_describe_user_scram_credentials(
        s.admin, (const char *const *) s.opts.pos, s.opts.npos, s.timeout_ms,
        &res);
    if (e != SAMSA_ERR_NONE) {
        rc = samsa_session_fail(&s, e, "cannot list SCRAM credentials");
        goto out;
    }
    samsa_session_list(&s, &j);
    if (!s.json) {
        t = samsa_table_new(3, hdr);
        samsa_table_align_right(t, 2);
    }
    for (i = 0; i < res->n; i++) {
        const samsa_user_scram_desc_t  *d = &res->users[i];

        if (d->err != SAMSA_ERR_NONE) {
            rc = SAMSA_EXIT_FAILED;
            fprintf(stderr, "%s: user '%s': %s: %s\n", s.cmd, d->user,
                    samsa_err_name(d->err), d->errmsg);
        }
        if (s.json) {
            user_list_json(&j, d);
            continue;
        }
        for (k = 0; k < d->ninfos; k++) {
            mech = samsa_admin_scram_mechanism_name(d->infos[k].mechanism);
            samsa_table_row(t);
            samsa_table_cell(t, "%s", d->user);
            samsa_table_cell(t, "%s", mech != NULL ? mech : "UNKNOWN");
            samsa_table_cell(t, "%d", (int) d->infos[k].iterations);
        }
    }
    samsa_session_list_end(&s, &j, t);
out:
    samsa_admin_result_free(res);
    samsa_session_close(&s);
    return rc;
}

/* ---- dispatch ----------------------------------------------------------- */

static const samsa_cli_sub_t  user_scram_subs[] = {
    { "set", user_scram_set, "create or replace a user's SCRAM credential" },
    { "list", user_scram_list, "users' SCRAM mechanisms and iterations" },
    { "delete", user_scram_delete, "remove a user's SCRAM credential" },
    { NULL, NULL, NULL },
};

static int
user_scram(int argc, char **argv)
{
    /* argv[0] is the first word after "scram" */
    return samsa_cli_dispatch("samsa user scram", user_scram_subs, argc + 1,
                              argv - 1);
}

static const samsa_cli_sub_t  user_subs[] = {
    { "scram", user_scram, "set, list, delete: SCRAM credentials" },
    { NULL, NULL, NULL },
};

int
samsa_cmd_user(int argc, char **argv)
{
    return samsa_cli_dispatch("samsa user", user_subs, argc, argv);
}
