/*
 * cli/cmd_group.c - "samsa group list|describe|reset-offsets|delete|
 * delete-offsets": kafka-consumer-groups.sh on libsamsa's admin client.
 * describe shows the members with their assignments (decoded from the
 * consumer protocol) and, per partition, the committed offset, the log end
 * offset and lag = log end offset - committed offset.  reset-offsets
 * shows its plan (--dry-run, the default) or commits it (--execute), and
 * only while the group has no members (state Empty), as Kafka's tool.
 * Threads: main.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <samsa/admin.h>

#include "cli/cli.h"
#include "cli/json.h"
#include "cli/session.h"
#include "cli/table.h"

/* An offset member: v, or null when not known. */
static void
group_json_off(samsa_json_t *j, const char *key, bool known, int64_t v)
{
    samsa_json_key(j, key);
    if (known) {
        samsa_json_int(j, v);
    } else {
        samsa_json_null(j);
    }
}

/* An offset cell: v, or empty when not known. */
static void
group_cell_off(samsa_table_t *t, bool known, int64_t v)
{
    if (known) {
        samsa_table_cell(t, "%lld", (long long) v);
    } else {
        samsa_table_cell(t, NULL);
    }
}

/* ---- list --------------------------------------------------------------- */

static const samsa_opt_t  group_list_opts[] = {
    { "--state", 's', SAMSA_OPT_MULTI, "STATE",
      "only groups in this state (Stable, Empty, PreparingRebalance, "
      "CompletingRebalance, Dead)" },
    { NULL, 0, SAMSA_OPT_FLAG, NULL, NULL },
};

static int
group_list(int argc, char **argv)
{
    static const char *const  hdr[] = { "GROUP", "STATE", "PROTOCOL-TYPE",
                                        "COORDINATOR" };
    samsa_session_t           s;
    samsa_group_listings_t   *res = NULL;
    samsa_table_t            *t;
    samsa_json_t              j;
    const char *const        *states;
    size_t                    nstates, i;
    samsa_err_t               e;
    int                       rc;

    if (!samsa_session_open(&s, &rc, "samsa group list",
                            "samsa group list [--state STATE]... [options]",
                            "List consumer groups (ListGroups on every "
                            "broker).", group_list_opts, argc, argv, 0, 0)) {
        return rc;
    }
    states = samsa_opts_all(&s.opts, "--state", &nstates);
    e = samsa_admin_list_groups(s.admin, states, nstates, s.timeout_ms, &res);
    if (e != SAMSA_ERR_NONE) {
        rc = samsa_session_fail(&s, e, "cannot list groups");
        samsa_session_close(&s);
        return rc;
    }
    if (res->err != SAMSA_ERR_NONE) {
        fprintf(stderr, "%s: a broker answered %s: %s\n", s.cmd,
                samsa_err_name(res->err), res->errmsg);
        rc = SAMSA_EXIT_FAILED;
    }
    t = samsa_table_new(4, hdr);
    samsa_table_align_right(t, 3);
    samsa_session_list(&s, &j);
    for (i = 0; i < res->n; i++) {
        const samsa_group_listing_t  *g = &res->groups[i];

        if (s.json) {
            samsa_json_obj(&j);
            samsa_json_kv_str(&j, "group_id", g->group_id);
            samsa_json_kv_str(&j, "state", g->state);
            samsa_json_kv_str(&j, "protocol_type", g->protocol_type);
            samsa_json_kv_int(&j, "coordinator", g->coordinator);
            samsa_json_obj_end(&j);
        }
        samsa_table_row(t);
        samsa_table_cell(t, "%s", g->group_id);
        samsa_table_cell(t, "%s", g->state[0] != '\0' ? g->state : "-");
        samsa_table_cell(t, "%s", g->protocol_type != NULL
                                      && g->protocol_type[0] != '\0'
                                      ? g->protocol_type : "-");
        samsa_table_cell(t, "%d", g->coordinator);
    }
    samsa_session_list_end(&s, &j, t);
    samsa_admin_result_free(res);
    samsa_session_close(&s);
    return rc;
}

/* ---- describe ----------------------------------------------------------- */

/* One partition of the describe table. */
typedef struct group_row {
    const char                  *topic;
    int32_t                      partition;
    int64_t                      committed;     /* -1: none */
    int64_t                      leo;           /* -1: unknown */
    const samsa_group_member_t  *owner;
} group_row_t;

typedef struct group_rows {
    group_row_t  *rows;
    size_t        n;
    size_t        cap;
} group_rows_t;

static group_row_t *
group_row_get(group_rows_t *rs, const char *topic, int32_t partition)
{
    size_t  i;

    for (i = 0; i < rs->n; i++) {
        if (rs->rows[i].partition == partition
            && strcmp(rs->rows[i].topic, topic) == 0) {
            return &rs->rows[i];
        }
    }
    if (rs->n == rs->cap) {
        rs->cap = rs->cap * 2 + 16;
        rs->rows = realloc(rs->rows, rs->cap * sizeof(*rs->rows));
    }
    rs->rows[rs->n] = (group_row_t) { topic, partition, -1, -1, NULL };
    return &rs->rows[rs->n++];
}

static int
group_row_cmp(const void *x, const void *y)
{
    const group_row_t  *a = x, *b = y;
    int                 c = strcmp(a->topic, b->topic);

    if (c != 0) {
        return c;
    }
    return (a->partition > b->partition) - (a->partition < b->partition);
}

/* The log end offsets of every row (ListOffsets latest). */
static samsa_err_t
group_rows_leo(samsa_session_t *s, group_rows_t *rs,
               samsa_tp_results_t **leo)
{
    samsa_tp_spec_t  *tps;
    samsa_err_t       e;
    size_t            i, k;

    *leo = NULL;
    if (rs->n == 0) {
        return SAMSA_ERR_NONE;
    }
    tps = calloc(rs->n, sizeof(*tps));
    for (i = 0; i < rs->n; i++) {
        tps[i] = (samsa_tp_spec_t) { rs->rows[i].topic,
                                     rs->rows[i].partition,
                                     SAMSA_OFFSET_SPEC_LATEST };
    }
    e = samsa_admin_list_offsets(s->admin, tps, rs->n, false, s->timeout_ms,
                                 leo);
    free(tps);
    for (i = 0; e == SAMSA_ERR_NONE && i < (*leo)->n; i++) {
        const samsa_tp_result_t  *it = &(*leo)->items[i];

        for (k = 0; k < rs->n; k++) {
            if (it->err == SAMSA_ERR_NONE
                && rs->rows[k].partition == it->partition
                && strcmp(rs->rows[k].topic, it->topic) == 0) {
                rs->rows[k].leo = it->offset;
            }
        }
    }
    return e;
}

static void
group_describe_json(samsa_json_t *j, const samsa_group_desc_t *gd,
                    const group_rows_t *rs)
{
    size_t  i, k;

    samsa_json_obj(j);
    samsa_json_kv_str(j, "group_id", gd->group_id);
    samsa_json_kv_str(j, "type", gd->type);
    samsa_json_kv_str(j, "state", gd->state);
    samsa_json_kv_str(j, "protocol_type", gd->protocol_type);
    samsa_json_kv_str(j, "protocol", gd->protocol);
    samsa_json_kv_int(j, "coordinator", gd->coordinator);
    samsa_json_key(j, "members");
    samsa_json_arr(j);
    for (i = 0; i < gd->nmembers; i++) {
        const samsa_group_member_t  *m = &gd->members[i];

        samsa_json_obj(j);
        samsa_json_kv_str(j, "member_id", m->member_id);
        samsa_json_kv_str(j, "group_instance_id", m->group_instance_id);
        samsa_json_kv_str(j, "client_id", m->client_id);
        samsa_json_kv_str(j, "client_host", m->client_host);
        samsa_json_key(j, "assignment");
        samsa_json_arr(j);
        for (k = 0; k < m->nassignment; k++) {
            samsa_json_obj(j);
            samsa_json_kv_str(j, "topic", m->assignment[k].topic);
            samsa_json_kv_int(j, "partition", m->assignment[k].partition);
            samsa_json_obj_end(j);
        }
        samsa_json_arr_end(j);
        samsa_json_obj_end(j);
    }
    samsa_json_arr_end(j);
    samsa_json_key(j, "offsets");
    samsa_json_arr(j);
    for (i = 0; i < rs->n; i++) {
        const group_row_t  *r = &rs->rows[i];

        samsa_json_obj(j);
        samsa_json_kv_str(j, "topic", r->topic);
        samsa_json_kv_int(j, "partition", r->partition);
        group_json_off(j, "committed_offset", r->committed >= 0,
                       r->committed);
        group_json_off(j, "log_end_offset", r->leo >= 0, r->leo);
        group_json_off(j, "lag", r->committed >= 0 && r->leo >= 0,
                       r->leo - r->committed);
        samsa_json_kv_str(j, "member_id",
                          r->owner != NULL ? r->owner->member_id : NULL);
        samsa_json_obj_end(j);
    }
    samsa_json_arr_end(j);
    samsa_json_obj_end(j);
}

static void
group_describe_text(const samsa_group_desc_t *gd, const group_rows_t *rs)
{
    static const char *const  ohdr[] = { "TOPIC", "PARTITION",
                                         "CURRENT-OFFSET", "LOG-END-OFFSET",
                                         "LAG", "CONSUMER-ID", "HOST",
                                         "CLIENT-ID" };
    static const char *const  mhdr[] = { "CONSUMER-ID", "INSTANCE-ID",
                                         "HOST", "CLIENT-ID", "#PARTITIONS",
                                         "ASSIGNMENT" };
    samsa_table_t            *t = samsa_table_new(8, ohdr);
    char                     *asg;
    size_t                    i, k, len;

    printf("Group '%s' (%s): state %s, protocol %s/%s, coordinator %d, "
           "%zu member(s)\n\n", gd->group_id,
           gd->type != NULL ? gd->type : "classic", gd->state,
           gd->protocol_type != NULL && gd->protocol_type[0] != '\0'
               ? gd->protocol_type : "-",
           gd->protocol != NULL && gd->protocol[0] != '\0' ? gd->protocol
                                                           : "-",
           gd->coordinator, gd->nmembers);
    for (i = 1; i < 5; i++) {
        samsa_table_align_right(t, i);
    }
    for (i = 0; i < rs->n; i++) {
        const group_row_t  *r = &rs->rows[i];

        samsa_table_row(t);
        samsa_table_cell(t, "%s", r->topic);
        samsa_table_cell(t, "%d", r->partition);
        group_cell_off(t, r->committed >= 0, r->committed);
        group_cell_off(t, r->leo >= 0, r->leo);
        group_cell_off(t, r->committed >= 0 && r->leo >= 0,
                       r->leo - r->committed);
        samsa_table_cell(t, "%s", r->owner != NULL ? r->owner->member_id
                                                   : "-");
        samsa_table_cell(t, "%s", r->owner != NULL ? r->owner->client_host
                                                   : "-");
        samsa_table_cell(t, "%s", r->owner != NULL ? r->owner->client_id
                                                   : "-");
    }
    samsa_table_print(t, stdout);
    samsa_table_free(t);
    if (gd->nmembers == 0) {
        return;
    }
    printf("\n");
    t = samsa_table_new(6, mhdr);
    samsa_table_align_right(t, 4);
    for (i = 0; i < gd->nmembers; i++) {
        const samsa_group_member_t  *m = &gd->members[i];

        asg = NULL;
        len = 0;
        for (k = 0; k < m->nassignment; k++) {
            size_t  add = strlen(m->assignment[k].topic) + 16;

            asg = realloc(asg, len + add);
            len += (size_t) snprintf(asg + len, add, "%s%s-%d",
                                     k > 0 ? "," : "",
                                     m->assignment[k].topic,
                                     m->assignment[k].partition);
        }
        samsa_table_row(t);
        samsa_table_cell(t, "%s", m->member_id);
        samsa_table_cell(t, "%s", m->group_instance_id != NULL
                                      ? m->group_instance_id : "-");
        samsa_table_cell(t, "%s", m->client_host);
        samsa_table_cell(t, "%s", m->client_id);
        samsa_table_cell(t, "%zu", m->nassignment);
        samsa_table_cell(t, "%s", asg != NULL ? asg
                                  : m->assignment_decoded ? "-" : "?");
        free(asg);
    }
    samsa_table_print(t, stdout);
    samsa_table_free(t);
}

/* The group's committed offsets (OffsetFetch for every partition) into
 * *c; the exit code, printed and *c NULL on failure. */
static int
group_committed(samsa_session_t *s, const char *group,
                samsa_tp_results_t **c)
{
    samsa_err_t  e;

    *c = NULL;
    e = samsa_admin_list_group_offsets(s->admin, group, NULL, 0,
                                       s->timeout_ms, c);
    if (e == SAMSA_ERR_NONE && (*c)->err != SAMSA_ERR_NONE) {
        e = (*c)->err;
    }
    if (e != SAMSA_ERR_NONE) {
        samsa_admin_result_free(*c);
        *c = NULL;
        return samsa_session_fail(s, e, "group '%s': committed offsets",
                                  group);
    }
    return SAMSA_EXIT_OK;
}

/* Describe one group into j or stdout; returns the exit code. */
static int
group_describe_one(samsa_session_t *s, samsa_json_t *j,
                   const samsa_group_desc_t *gd, bool first)
{
    samsa_tp_results_t  *committed = NULL, *leo = NULL;
    group_rows_t         rs;
    group_row_t         *r;
    samsa_err_t          e;
    size_t               i, k;
    int                  rc;

    memset(&rs, 0, sizeof(rs));
    if (gd->err != SAMSA_ERR_NONE) {
        fprintf(stderr, "%s: group '%s': %s: %s\n", s->cmd, gd->group_id,
                samsa_err_name(gd->err), gd->errmsg);
        return SAMSA_EXIT_FAILED;
    }
    rc = group_committed(s, gd->group_id, &committed);
    if (rc != SAMSA_EXIT_OK) {
        return rc;
    }
    if (strcmp(gd->state, "Dead") == 0 && committed->n == 0) {
        fprintf(stderr, "%s: group '%s' does not exist: %s\n", s->cmd,
                gd->group_id, samsa_err_name(SAMSA_ERR_GROUP_ID_NOT_FOUND));
        samsa_admin_result_free(committed);
        return SAMSA_EXIT_FAILED;
    }
    for (i = 0; i < committed->n; i++) {
        r = group_row_get(&rs, committed->items[i].topic,
                          committed->items[i].partition);
        r->committed = committed->items[i].err == SAMSA_ERR_NONE
                           ? committed->items[i].offset : -1;
    }
    for (i = 0; i < gd->nmembers; i++) {
        for (k = 0; k < gd->members[i].nassignment; k++) {
            r = group_row_get(&rs, gd->members[i].assignment[k].topic,
                              gd->members[i].assignment[k].partition);
            r->owner = &gd->members[i];
        }
    }
    if (rs.n > 0) {
        qsort(rs.rows, rs.n, sizeof(*rs.rows), group_row_cmp);
    }
    e = group_rows_leo(s, &rs, &leo);
    if (e != SAMSA_ERR_NONE) {
        free(rs.rows);
        samsa_admin_result_free(committed);
        return samsa_session_fail(s, e, "group '%s': log end offsets",
                                  gd->group_id);
    }
    if (s->json) {
        group_describe_json(j, gd, &rs);
    } else {
        printf("%s", first ? "" : "\n");
        group_describe_text(gd, &rs);
    }
    free(rs.rows);
    samsa_admin_result_free(committed);
    samsa_admin_result_free(leo);
    return SAMSA_EXIT_OK;
}

static int
group_describe(int argc, char **argv)
{
    samsa_session_t       s;
    samsa_group_descs_t  *res = NULL;
    samsa_json_t          j;
    samsa_err_t           e;
    size_t                i;
    int                   rc, one;

    if (!samsa_session_open(&s, &rc, "samsa group describe",
                            "samsa group describe GROUP... [options]",
                            "Members and assignments, and per partition "
                            "the committed offset, log end offset and "
                            "lag.", NULL, argc, argv, 1, SIZE_MAX)) {
        return rc;
    }
    e = samsa_admin_describe_groups(s.admin, s.opts.pos, s.opts.npos,
                                    s.timeout_ms, &res);
    if (e != SAMSA_ERR_NONE) {
        rc = samsa_session_fail(&s, e, "cannot describe groups");
        samsa_session_close(&s);
        return rc;
    }
    samsa_session_list(&s, &j);
    for (i = 0; i < res->n; i++) {
        one = group_describe_one(&s, &j, &res->groups[i], i == 0);
        rc = rc == SAMSA_EXIT_OK ? one : rc;
    }
    samsa_session_list_end(&s, &j, NULL);
    samsa_admin_result_free(res);
    samsa_session_close(&s);
    return rc;
}

/* ---- partitions named by --topic ---------------------------------------- */

typedef struct group_tps {
    samsa_tp_spec_t  *tps;
    size_t            n;
    char            **names;          /* owned topic names */
    size_t            nnames;
} group_tps_t;

static void
group_tps_fini(group_tps_t *g)
{
    size_t  i;

    for (i = 0; i < g->nnames; i++) {
        free(g->names[i]);
    }
    free(g->names);
    free(g->tps);
    memset(g, 0, sizeof(*g));
}

static void
group_tps_add(group_tps_t *g, const char *topic, int32_t partition)
{
    g->tps = realloc(g->tps, (g->n + 1) * sizeof(*g->tps));
    g->tps[g->n++] = (samsa_tp_spec_t) { topic, partition, -1 };
}

/* The partitions of --topic T[:P,...] (all of T's when none listed) or,
 * with all_committed, of every partition the group has an offset for.
 * Returns the exit code. */
static int
group_tps_collect(samsa_session_t *s, const char *group, bool all_committed,
                  group_tps_t *g)
{
    const char *const     *ts;
    samsa_topic_descs_t   *td = NULL;
    samsa_tp_results_t    *c = NULL;
    int32_t               *parts;
    char                  *topic, err[256];
    size_t                 nts, np, i, k;
    int                    rc;

    ts = samsa_opts_all(&s->opts, "--topic", &nts);
    for (i = 0; i < nts; i++) {
        if (samsa_opts_parse_topic_parts("--topic", ts[i], &topic, &parts,
                                         &np, err, sizeof(err)) != 0) {
            return samsa_session_usage(s, "%s", err);
        }
        g->names = realloc(g->names, (g->nnames + 1) * sizeof(char *));
        g->names[g->nnames++] = topic;
        for (k = 0; k < np; k++) {
            group_tps_add(g, topic, parts[k]);
        }
        free(parts);
        if (np > 0) {
            continue;
        }
        rc = samsa_session_topic(s, topic, &td);
        if (rc != SAMSA_EXIT_OK) {
            return rc;
        }
        for (k = 0; k < td->topics[0].npartitions; k++) {
            group_tps_add(g, topic, td->topics[0].partitions[k].partition);
        }
        samsa_admin_result_free(td);
        td = NULL;
    }
    if (!all_committed) {
        return SAMSA_EXIT_OK;
    }
    rc = group_committed(s, group, &c);
    if (rc != SAMSA_EXIT_OK) {
        return rc;
    }
    for (i = 0; i < c->n; i++) {
        g->names = realloc(g->names, (g->nnames + 1) * sizeof(char *));
        g->names[g->nnames++] = strdup(c->items[i].topic);
        group_tps_add(g, g->names[g->nnames - 1], c->items[i].partition);
    }
    samsa_admin_result_free(c);
    return SAMSA_EXIT_OK;
}

/* ---- reset-offsets ------------------------------------------------------ */

static const samsa_opt_t  group_reset_opts[] = {
    { "--topic", 't', SAMSA_OPT_MULTI, "TOPIC[:P,P...]",
      "partitions to reset (all of the topic's when none listed)" },
    { "--all-topics", 0, SAMSA_OPT_FLAG, NULL,
      "every partition the group has an offset for" },
    { "--to-earliest", 0, SAMSA_OPT_FLAG, NULL, "to the log start offset" },
    { "--to-latest", 0, SAMSA_OPT_FLAG, NULL, "to the log end offset" },
    { "--to-offset", 0, SAMSA_OPT_VALUE, "N",
      "to offset N (kept within log start..end)" },
    { "--to-datetime", 0, SAMSA_OPT_VALUE, "YYYY-MM-DDTHH:MM:SS[.sss][Z]",
      "to the first offset at or after this time (UTC unless a zone "
      "is given)" },
    { "--shift-by", 0, SAMSA_OPT_VALUE, "N",
      "move the committed offset by N (may be negative)" },
    { "--dry-run", 0, SAMSA_OPT_FLAG, NULL,
      "show the plan, change nothing (the default)" },
    { "--execute", 0, SAMSA_OPT_FLAG, NULL, "commit the plan" },
    { NULL, 0, SAMSA_OPT_FLAG, NULL, NULL },
};

typedef enum group_to {
    GROUP_TO_EARLIEST,
    GROUP_TO_LATEST,
    GROUP_TO_OFFSET,
    GROUP_TO_DATETIME,
    GROUP_SHIFT_BY,
} group_to_t;

/* Which --to-* was given (exactly one), and its number. */
static int
group_reset_target(samsa_session_t *s, group_to_t *to, int64_t *arg)
{
    static const char *const  flags[] = { "--to-earliest", "--to-latest",
                                          "--to-offset", "--to-datetime",
                                          "--shift-by" };
    char                      err[256];
    size_t                    i, n = 0;

    for (i = 0; i < 5; i++) {
        if (samsa_opts_has(&s->opts, flags[i])) {
            *to = (group_to_t) i;
            n++;
        }
    }
    if (n != 1) {
        return samsa_session_usage(s, "give exactly one of --to-earliest, "
                                   "--to-latest, --to-offset, "
                                   "--to-datetime, --shift-by");
    }
    if (samsa_opts_has(&s->opts, "--dry-run")
        && samsa_opts_has(&s->opts, "--execute")) {
        return samsa_session_usage(s, "--dry-run and --execute exclude "
                                   "each other");
    }
    if (samsa_opts_has(&s->opts, "--topic")
        == samsa_opts_has(&s->opts, "--all-topics")) {
        return samsa_session_usage(s, "give --topic or --all-topics "
                                   "(one of them)");
    }
    *arg = 0;
    if (*to == GROUP_TO_OFFSET
        && samsa_opts_i64(&s->opts, "--to-offset", 0, INT64_MAX, 0, arg,
                          err, sizeof(err)) != 0) {
        return samsa_session_usage(s, "%s", err);
    }
    if (*to == GROUP_SHIFT_BY
        && samsa_opts_i64(&s->opts, "--shift-by", INT64_MIN / 2,
                          INT64_MAX / 2, 0, arg, err, sizeof(err)) != 0) {
        return samsa_session_usage(s, "%s", err);
    }
    if (*to == GROUP_TO_DATETIME
        && samsa_opts_parse_datetime("--to-datetime",
                                     samsa_opts_get(&s->opts,
                                                    "--to-datetime"),
                                     arg, err, sizeof(err)) != 0) {
        return samsa_session_usage(s, "%s", err);
    }
    return SAMSA_EXIT_OK;
}

/* ListOffsets with spec for every partition of g. */
static samsa_err_t
group_list_offsets(samsa_session_t *s, group_tps_t *g, int64_t spec,
                   samsa_tp_results_t **res)
{
    size_t  i;

    for (i = 0; i < g->n; i++) {
        g->tps[i].value = spec;
    }
    return samsa_admin_list_offsets(s->admin, g->tps, g->n, false,
                                    s->timeout_ms, res);
}

/* Fill g->tps[i].value with each partition's new offset; current gets
 * the committed offsets.  Partitions with errors keep value -1 and are
 * reported.  Returns the exit code. */
static int
group_reset_plan(samsa_session_t *s, const char *group, group_tps_t *g,
                 group_to_t to, int64_t arg, samsa_tp_results_t **current)
{
    samsa_tp_results_t        *lo = NULL, *hi = NULL, *at = NULL;
    const samsa_tp_result_t   *l, *h, *c, *a;
    samsa_topic_partition_t   *tp;
    samsa_err_t                e;
    int64_t                    v;
    size_t                     i;
    int                        rc = SAMSA_EXIT_OK;

    tp = calloc(g->n + 1, sizeof(*tp));
    for (i = 0; i < g->n; i++) {
        tp[i] = (samsa_topic_partition_t) { g->tps[i].topic,
                                            g->tps[i].partition };
    }
    e = samsa_admin_list_group_offsets(s->admin, group, tp, g->n,
                                       s->timeout_ms, current);
    free(tp);
    if (e == SAMSA_ERR_NONE) {
        e = group_list_offsets(s, g, SAMSA_OFFSET_SPEC_EARLIEST, &lo);
    }
    if (e == SAMSA_ERR_NONE) {
        e = group_list_offsets(s, g, SAMSA_OFFSET_SPEC_LATEST, &hi);
    }
    if (e == SAMSA_ERR_NONE && to == GROUP_TO_DATETIME) {
        e = group_list_offsets(s, g, arg, &at);
    }
    if (e != SAMSA_ERR_NONE) {
        rc = samsa_session_fail(s, e, "group '%s': cannot plan the reset",
                                group);
        goto out;
    }
    for (i = 0; i < g->n; i++) {
        samsa_tp_spec_t  *t = &g->tps[i];

        l = samsa_session_tp_find(lo, t->topic, t->partition);
        h = samsa_session_tp_find(hi, t->topic, t->partition);
        c = samsa_session_tp_find(*current, t->topic, t->partition);
        a = samsa_session_tp_find(at, t->topic, t->partition);
        t->value = -1;
        if (l == NULL || h == NULL || l->err != SAMSA_ERR_NONE
            || h->err != SAMSA_ERR_NONE) {
            e = l == NULL || h == NULL ? SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION
                : l->err != SAMSA_ERR_NONE ? l->err : h->err;
            rc = samsa_session_tp_fail(s, t->topic, t->partition, e,
                                       samsa_err_text(e));
            continue;
        }
        switch (to) {
        case GROUP_TO_EARLIEST:
            v = l->offset;
            break;
        case GROUP_TO_LATEST:
            v = h->offset;
            break;
        case GROUP_TO_OFFSET:
            v = arg;
            break;
        case GROUP_TO_DATETIME:
            v = a != NULL && a->err == SAMSA_ERR_NONE && a->offset >= 0
                    ? a->offset : h->offset;
            break;
        default:                                /* shift from committed */
            v = (c != NULL && c->offset >= 0 ? c->offset : h->offset) + arg;
            break;
        }
        t->value = v < l->offset ? l->offset : v > h->offset ? h->offset : v;
    }
out:
    samsa_admin_result_free(lo);
    samsa_admin_result_free(hi);
    samsa_admin_result_free(at);
    return rc;
}

static void
group_reset_print(samsa_session_t *s, const char *group, const group_tps_t *g,
                  const samsa_tp_results_t *current,
                  const samsa_tp_results_t *done, bool executed)
{
    static const char *const  hdr[] = { "GROUP", "TOPIC", "PARTITION",
                                        "CURRENT-OFFSET", "NEW-OFFSET",
                                        "ERROR" };
    samsa_table_t            *t = samsa_table_new(6, hdr);
    samsa_json_t              j;
    const samsa_tp_result_t  *c, *d;
    size_t                    i;

    samsa_json_init(&j, stdout);
    if (s->json) {
        samsa_json_obj(&j);
        samsa_json_kv_str(&j, "group_id", group);
        samsa_json_kv_bool(&j, "executed", executed);
        samsa_json_key(&j, "partitions");
        samsa_json_arr(&j);
    }
    for (i = 2; i < 5; i++) {
        samsa_table_align_right(t, i);
    }
    for (i = 0; i < g->n; i++) {
        c = samsa_session_tp_find(current, g->tps[i].topic,
                                  g->tps[i].partition);
        d = samsa_session_tp_find(done, g->tps[i].topic,
                                  g->tps[i].partition);
        if (s->json) {
            samsa_json_obj(&j);
            samsa_json_kv_str(&j, "topic", g->tps[i].topic);
            samsa_json_kv_int(&j, "partition", g->tps[i].partition);
            group_json_off(&j, "current_offset", c != NULL && c->offset >= 0,
                           c != NULL ? c->offset : -1);
            group_json_off(&j, "new_offset",    /* no plan: see stderr */
                           g->tps[i].value >= 0, g->tps[i].value);
            samsa_json_kv_str(&j, "error",
                              d != NULL && d->err != SAMSA_ERR_NONE
                                  ? samsa_err_name(d->err) : NULL);
            samsa_json_obj_end(&j);
        }
        samsa_table_row(t);
        samsa_table_cell(t, "%s", group);
        samsa_table_cell(t, "%s", g->tps[i].topic);
        samsa_table_cell(t, "%d", g->tps[i].partition);
        group_cell_off(t, c != NULL && c->offset >= 0,
                       c != NULL ? c->offset : -1);
        group_cell_off(t, g->tps[i].value >= 0, g->tps[i].value);
        samsa_table_cell(t, "%s", d != NULL && d->err != SAMSA_ERR_NONE
                                      ? samsa_err_name(d->err) : "-");
    }
    if (s->json) {
        samsa_json_arr_end(&j);
        samsa_json_obj_end(&j);
        samsa_json_end(&j);
    } else {
        samsa_table_print(t, stdout);
        if (!executed) {
            printf("\nDry run: nothing changed; --execute commits this "
                   "plan.\n");
        }
    }
    samsa_table_free(t);
}

/* Commit the plan; refuses (exit 1) unless the group is Empty/unknown. */
static int
group_reset_execute(samsa_session_t *s, const char *group, group_tps_t *g,
                    samsa_tp_results_t **done)
{
    samsa_group_descs_t  *gd = NULL;
    samsa_err_t           e;
    size_t                i, n = 0;

    for (i = 0; i < g->n; i++) {             /* failed plans left out */
        if (g->tps[i].value >= 0) {
            g->tps[n++] = g->tps[i];
        }
    }
    g->n = n;
    if (n == 0) {
        return SAMSA_EXIT_FAILED;
    }
    e = samsa_admin_alter_group_offsets(s->admin, group, g->tps, n,
                                        s->timeout_ms, done);
    if (e == SAMSA_ERR_NON_EMPTY_GROUP
        && samsa_admin_describe_groups(s->admin, &group, 1, s->timeout_ms,
                                       &gd) == SAMSA_ERR_NONE) {
        fprintf(stderr, "%s: group '%s' is %s with %zu member(s): offsets "
                "can only be reset while the group is inactive (Empty); "
                "stop its consumers first (%s)\n", s->cmd, group,
                gd->groups[0].state, gd->groups[0].nmembers,
                samsa_err_name(e));
        samsa_admin_result_free(gd);
        return SAMSA_EXIT_FAILED;
    }
    if (e != SAMSA_ERR_NONE) {
        return samsa_session_fail(s, e, "group '%s': cannot reset offsets",
                                  group);
    }
    for (i = 0; i < (*done)->n; i++) {
        if ((*done)->items[i].err != SAMSA_ERR_NONE) {
            return samsa_session_tp_fail(s, (*done)->items[i].topic,
                                         (*done)->items[i].partition,
                                         (*done)->items[i].err,
                                         (*done)->items[i].errmsg);
        }
    }
    return SAMSA_EXIT_OK;
}

static int
group_reset_offsets(int argc, char **argv)
{
    samsa_session_t      s;
    samsa_tp_results_t  *current = NULL, *done = NULL;
    group_tps_t          g;
    group_to_t           to = GROUP_TO_EARLIEST;
    const char          *group;
    int64_t              arg = 0;
    bool                 execute;
    int                  rc, rc2;

    memset(&g, 0, sizeof(g));
    rc = samsa_session_parse(&s, "samsa group reset-offsets",
                             "samsa group reset-offsets GROUP (--topic T[:P,"
                             "...]... | --all-topics) --to-... [--dry-run | "
                             "--execute] [options]",
                             "Plan (--dry-run, the default) or commit "
                             "(--execute) new committed offsets for an "
                             "inactive group.",
                             group_reset_opts, argc, argv, 1, 1);
    if (rc >= 0 || (rc = group_reset_target(&s, &to, &arg)) != SAMSA_EXIT_OK
        || (rc = samsa_session_connect(&s)) != SAMSA_EXIT_OK) {
        samsa_session_close(&s);
        return rc;
    }
    group = s.opts.pos[0];
    execute = samsa_opts_has(&s.opts, "--execute");
    rc = group_tps_collect(&s, group, samsa_opts_has(&s.opts, "--all-topics"),
                           &g);
    if (rc == SAMSA_EXIT_OK && g.n == 0) {
        fprintf(stderr, "%s: no partitions to reset\n", s.cmd);
        rc = SAMSA_EXIT_FAILED;
    }
    if (rc == SAMSA_EXIT_OK || (rc == SAMSA_EXIT_FAILED && g.n > 0)) {
        rc2 = group_reset_plan(&s, group, &g, to, arg, &current);
        rc = rc == SAMSA_EXIT_OK ? rc2 : rc;
        if (execute && current != NULL) {
            rc2 = group_reset_execute(&s, group, &g, &done);
            rc = rc == SAMSA_EXIT_OK ? rc2 : rc;
        }
        if (current != NULL && (!execute || done != NULL)) {
            group_reset_print(&s, group, &g, current, done, done != NULL);
        }
    }
    samsa_admin_result_free(current);
    samsa_admin_result_free(done);
    group_tps_fini(&g);
    samsa_session_close(&s);
    return rc;
}

/* ---- delete, delete-offsets --------------------------------------------- */

static int
group_delete(int argc, char **argv)
{
    samsa_session_t       s;
    samsa_admin_items_t  *res = NULL;
    samsa_json_t          j;
    samsa_err_t           e;
    size_t                i;
    int                   rc;

    if (!samsa_session_open(&s, &rc, "samsa group delete",
                            "samsa group delete GROUP... [options]",
                            "Delete inactive groups and their offsets "
                            "(DeleteGroups).", NULL, argc, argv, 1,
                            SIZE_MAX)) {
        return rc;
    }
    e = samsa_admin_delete_groups(s.admin, s.opts.pos, s.opts.npos,
                                  s.timeout_ms, &res);
    if (e != SAMSA_ERR_NONE) {
        rc = samsa_session_fail(&s, e, "cannot delete groups");
        samsa_session_close(&s);
        return rc;
    }
    samsa_session_list(&s, &j);
    for (i = 0; i < res->n; i++) {
        const samsa_admin_item_t  *it = &res->items[i];

        if (it->err != SAMSA_ERR_NONE) {
            rc = SAMSA_EXIT_FAILED;
            fprintf(stderr, "%s: group '%s': %s: %s\n", s.cmd, it->name,
                    samsa_err_name(it->err), it->errmsg);
        } else if (!s.json) {
            printf("Deleted group '%s'.\n", it->name);
        }
        if (s.json) {
            samsa_json_obj(&j);
            samsa_json_kv_str(&j, "group_id", it->name);
            samsa_session_json_err(&j, it->err);
            samsa_json_obj_end(&j);
        }
    }
    samsa_session_list_end(&s, &j, NULL);
    samsa_admin_result_free(res);
    samsa_session_close(&s);
    return rc;
}

static const samsa_opt_t  group_deloff_opts[] = {
    { "--topic", 't', SAMSA_OPT_MULTI, "TOPIC[:P,P...]",
      "partitions whose offsets to delete (all of the topic's when none "
      "listed)" },
    { NULL, 0, SAMSA_OPT_FLAG, NULL, NULL },
};

static int
group_delete_offsets(int argc, char **argv)
{
    samsa_session_t           s;
    samsa_tp_results_t       *res = NULL;
    samsa_topic_partition_t  *tp = NULL;
    group_tps_t               g;
    samsa_err_t               e;
    size_t                    i;
    int                       rc;

    memset(&g, 0, sizeof(g));
    rc = samsa_session_parse(&s, "samsa group delete-offsets",
                             "samsa group delete-offsets GROUP --topic "
                             "T[:P,...]... [options]",
                             "Forget a group's committed offsets "
                             "(OffsetDelete).", group_deloff_opts, argc,
                             argv, 1, 1);
    if (rc < 0 && !samsa_opts_has(&s.opts, "--topic")) {
        rc = samsa_session_usage(&s, "--topic is required");
    }
    if (rc >= 0 || (rc = samsa_session_connect(&s)) != SAMSA_EXIT_OK
        || (rc = group_tps_collect(&s, s.opts.pos[0], false, &g))
               != SAMSA_EXIT_OK) {
        goto out;
    }
    tp = calloc(g.n + 1, sizeof(*tp));
    for (i = 0; i < g.n; i++) {
        tp[i] = (samsa_topic_partition_t) { g.tps[i].topic,
                                            g.tps[i].partition };
    }
    e = samsa_admin_delete_group_offsets(s.admin, s.opts.pos[0], tp, g.n,
                                         s.timeout_ms, &res);
    if (e == SAMSA_ERR_NONE && res->err != SAMSA_ERR_NONE) {
        e = res->err;
    }
    if (e != SAMSA_ERR_NONE) {
        rc = samsa_session_fail(&s, e, "group '%s': cannot delete offsets",
                                s.opts.pos[0]);
        goto out;
    }
    for (i = 0; i < res->n; i++) {
        if (res->items[i].err != SAMSA_ERR_NONE) {
            rc = samsa_session_tp_fail(&s, res->items[i].topic,
                                       res->items[i].partition,
                                       res->items[i].err,
                                       res->items[i].errmsg);
        } else {
            printf("Deleted the offset of %s-%d.\n", res->items[i].topic,
                   res->items[i].partition);
        }
    }
out:
    free(tp);
    samsa_admin_result_free(res);
    group_tps_fini(&g);
    samsa_session_close(&s);
    return rc;
}

static const samsa_cli_sub_t  group_subs[] = {
    { "list", group_list, "list consumer groups" },
    { "describe", group_describe, "members, assignments, offsets and lag" },
    { "reset-offsets", group_reset_offsets,
      "plan or commit new offsets for an inactive group" },
    { "delete", group_delete, "delete inactive groups" },
    { "delete-offsets", group_delete_offsets,
      "forget a group's offsets for some partitions" },
    { NULL, NULL, NULL },
};

int
samsa_cmd_group(int argc, char **argv)
{
    return samsa_cli_dispatch("samsa group", group_subs, argc, argv);
}
