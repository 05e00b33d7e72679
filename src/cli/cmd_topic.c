/*
 * cli/cmd_topic.c - "samsa topic create|list|describe|delete|alter-config|
 * create-partitions|delete-records", on libsamsa's admin client
 * (samsa/admin.h): kafka-topics.sh, kafka-configs.sh for topics and
 * kafka-delete-records.sh in one verb.
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

/* Kafka prints topic ids as URL-safe base64 without padding. */
static void
samsa_cli_topic_id(const uint8_t id[16], char out[24])
{
    static const char  b64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    uint32_t           v;
    int                i, o = 0;

    for (i = 0; i < 15; i += 3) {
        v = (uint32_t) id[i] << 16 | (uint32_t) id[i + 1] << 8 | id[i + 2];
        out[o++] = b64[(v >> 18) & 63];
        out[o++] = b64[(v >> 12) & 63];
        out[o++] = b64[(v >> 6) & 63];
        out[o++] = b64[v & 63];
    }
    v = (uint32_t) id[15] << 16;
    out[o++] = b64[(v >> 18) & 63];
    out[o++] = b64[(v >> 12) & 63];
    out[o] = '\0';
}

/* "1,2,3" into buf. */
static const char *
topic_ids(const int32_t *v, size_t n, char *buf, size_t size)
{
    size_t  i, off = 0;

    buf[0] = '\0';
    for (i = 0; i < n && off < size; i++) {
        off += (size_t) snprintf(buf + off, size - off, "%s%d",
                                 i > 0 ? "," : "", v[i]);
    }
    return buf;
}

static void
topic_json_ids(samsa_json_t *j, const int32_t *v, size_t n)
{
    size_t  i;

    samsa_json_arr(j);
    for (i = 0; i < n; i++) {
        samsa_json_int(j, v[i]);
    }
    samsa_json_arr_end(j);
}

/* Print per-item outcomes of a topic call; returns the exit code.
 * ok_err: an error that counts as success (TOPIC_ALREADY_EXISTS with
 * --if-not-exists), with ok_text. */
static int
topic_items_report(samsa_session_t *s, const samsa_admin_items_t *res,
                   const char *done, samsa_err_t ok_err, const char *ok_text)
{
    samsa_json_t  j;
    size_t        i;
    int           rc = SAMSA_EXIT_OK;

    samsa_session_list(s, &j);
    for (i = 0; i < res->n; i++) {
        const samsa_admin_item_t  *it = &res->items[i];
        bool                       ok = it->err == SAMSA_ERR_NONE
                                        || (ok_err != SAMSA_ERR_NONE
                                            && it->err == ok_err);

        if (!ok) {
            rc = SAMSA_EXIT_FAILED;
            fprintf(stderr, "%s: '%s': %s: %s\n", s->cmd, it->name,
                    samsa_err_name(it->err), it->errmsg);
        }
        if (s->json) {
            samsa_json_obj(&j);
            samsa_json_kv_str(&j, "name", it->name);
            samsa_json_kv_bool(&j, "ok", ok);
            samsa_session_json_err(&j, it->err);
            samsa_json_kv_str(&j, "message", it->errmsg);
            samsa_json_obj_end(&j);
        } else if (it->err == SAMSA_ERR_NONE) {
            printf("%s '%s'.\n", done, it->name);
        } else if (ok) {
            printf("%s '%s'.\n", ok_text, it->name);
        }
    }
    samsa_session_list_end(s, &j, NULL);
    return rc;
}

/* ---- create ------------------------------------------------------------- */

static const samsa_opt_t  topic_create_opts[] = {
    { "--partitions", 'p', SAMSA_OPT_VALUE, "N",
      "number of partitions (default: the broker's num.partitions)" },
    { "--replication-factor", 'r', SAMSA_OPT_VALUE, "N",
      "replicas per partition (default: the broker's)" },
    { "--config", 'c', SAMSA_OPT_MULTI, "KEY=VALUE", "a topic config" },
    { "--if-not-exists", 0, SAMSA_OPT_FLAG, NULL,
      "succeed if the topic exists already" },
    { "--validate-only", 0, SAMSA_OPT_FLAG, NULL,
      "check the request, create nothing" },
    { NULL, 0, SAMSA_OPT_FLAG, NULL, NULL },
};

static int
topic_create(int argc, char **argv)
{
    samsa_session_t       s;
    samsa_new_topic_t     nt;
    samsa_admin_kv_t     *cfg = NULL;
    samsa_admin_items_t  *res = NULL;
    const char *const    *kvs;
    char                 *key, err[256];
    size_t                ncfg = 0, i;
    int64_t               parts, rf;
    samsa_err_t           e;
    int                   rc;

    rc = samsa_session_parse(&s, "samsa topic create",
                             "samsa topic create TOPIC [options]",
                             "Create a topic (CreateTopics).",
                             topic_create_opts, argc, argv, 1, 1);
    if (rc >= 0) {
        samsa_session_close(&s);
        return rc;
    }
    kvs = samsa_opts_all(&s.opts, "--config", &ncfg);
    cfg = calloc(ncfg + 1, sizeof(*cfg));
    for (i = 0; i < ncfg; i++) {
        if (samsa_opts_kv("--config", kvs[i], &key, &cfg[i].value, err,
                          sizeof(err)) != 0) {
            rc = samsa_session_usage(&s, "%s", err);
            goto out;
        }
        cfg[i].name = key;
    }
    if (samsa_opts_i64(&s.opts, "--partitions", 1, INT32_MAX, -1, &parts,
                       err, sizeof(err)) != 0
        || samsa_opts_i64(&s.opts, "--replication-factor", 1, INT16_MAX, -1,
                          &rf, err, sizeof(err)) != 0) {
        rc = samsa_session_usage(&s, "%s", err);
        goto out;
    }
    rc = samsa_session_connect(&s);
    if (rc != SAMSA_EXIT_OK) {
        goto out;
    }
    nt.name = s.opts.pos[0];
    nt.num_partitions = (int32_t) parts;
    nt.replication_factor = (int16_t) rf;
    nt.configs = cfg;
    nt.nconfigs = ncfg;
    e = samsa_admin_create_topics(s.admin, &nt, 1,
                                  samsa_opts_has(&s.opts, "--validate-only"),
                                  s.timeout_ms, &res);
    if (e != SAMSA_ERR_NONE) {
        rc = samsa_session_fail(&s, e, "cannot create topic '%s'", nt.name);
        goto out;
    }
    rc = topic_items_report(
        &s, res,
        samsa_opts_has(&s.opts, "--validate-only") ? "Valid: would create"
                                                   : "Created topic",
        samsa_opts_has(&s.opts, "--if-not-exists")
            ? SAMSA_ERR_TOPIC_ALREADY_EXISTS : SAMSA_ERR_NONE,
        "Topic exists already:");
out:
    for (i = 0; i < ncfg; i++) {
        free((char *) cfg[i].name);
    }
    free(cfg);
    samsa_admin_result_free(res);
    samsa_session_close(&s);
    return rc;
}

/* ---- list --------------------------------------------------------------- */

static const samsa_opt_t  topic_list_opts[] = {
    { "--exclude-internal", 0, SAMSA_OPT_FLAG, NULL,
      "leave out internal topics (__consumer_offsets)" },
    { NULL, 0, SAMSA_OPT_FLAG, NULL, NULL },
};

static int
topic_list(int argc, char **argv)
{
    static const char *const  hdr[] = { "TOPIC", "PARTITIONS", "REPLICAS",
                                        "INTERNAL" };
    samsa_session_t           s;
    samsa_topic_descs_t      *res = NULL;
    samsa_table_t            *t;
    samsa_json_t              j;
    samsa_err_t               e;
    bool                      excl;
    size_t                    i;
    int                       rc;

    if (!samsa_session_open(&s, &rc, "samsa topic list",
                            "samsa topic list [options]",
                            "List the cluster's topics (Metadata).",
                            topic_list_opts, argc, argv, 0, 0)) {
        return rc;
    }
    e = samsa_admin_describe_topics(s.admin, NULL, 0, s.timeout_ms, &res);
    if (e != SAMSA_ERR_NONE) {
        rc = samsa_session_fail(&s, e, "cannot list topics");
        samsa_session_close(&s);
        return rc;
    }
    excl = samsa_opts_has(&s.opts, "--exclude-internal");
    t = samsa_table_new(4, hdr);
    samsa_table_align_right(t, 1);
    samsa_table_align_right(t, 2);
    samsa_session_list(&s, &j);
    for (i = 0; i < res->n; i++) {
        const samsa_topic_desc_t  *td = &res->topics[i];
        size_t                     rf = td->npartitions > 0
                                            ? td->partitions[0].nreplicas : 0;

        if (excl && td->is_internal) {
            continue;
        }
        if (s.json) {
            samsa_json_obj(&j);
            samsa_json_kv_str(&j, "name", td->name);
            samsa_json_kv_int(&j, "partitions", (int64_t) td->npartitions);
            samsa_json_kv_int(&j, "replication_factor", (int64_t) rf);
            samsa_json_kv_bool(&j, "internal", td->is_internal);
            samsa_json_obj_end(&j);
        }
        samsa_table_row(t);
        samsa_table_cell(t, "%s", td->name);
        samsa_table_cell(t, "%zu", td->npartitions);
        samsa_table_cell(t, "%zu", rf);
        samsa_table_cell(t, "%s", td->is_internal ? "yes" : "no");
    }
    samsa_session_list_end(&s, &j, t);
    samsa_admin_result_free(res);
    samsa_session_close(&s);
    return SAMSA_EXIT_OK;
}

/* ---- describe ----------------------------------------------------------- */

/* Log start and end offsets of every partition of the described topics:
 * two ListOffsets calls; NULL (and a message) on failure. */
static samsa_err_t
topic_offsets(samsa_session_t *s, const samsa_topic_descs_t *td,
              samsa_tp_results_t **start, samsa_tp_results_t **end)
{
    samsa_tp_spec_t  *tps;
    samsa_err_t       e;
    size_t            i, k, n = 0;

    *start = *end = NULL;
    for (i = 0; i < td->n; i++) {
        n += td->topics[i].err == SAMSA_ERR_NONE ? td->topics[i].npartitions
                                                 : 0;
    }
    if (n == 0) {
        return SAMSA_ERR_NONE;
    }
    tps = calloc(n, sizeof(*tps));
    n = 0;
    for (i = 0; i < td->n; i++) {
        for (k = 0; td->topics[i].err == SAMSA_ERR_NONE
                    && k < td->topics[i].npartitions; k++) {
            tps[n].topic = td->topics[i].name;
            tps[n].partition = td->topics[i].partitions[k].partition;
            tps[n++].value = SAMSA_OFFSET_SPEC_EARLIEST;
        }
    }
    e = samsa_admin_list_offsets(s->admin, tps, n, false, s->timeout_ms,
                                 start);
    for (i = 0; i < n; i++) {
        tps[i].value = SAMSA_OFFSET_SPEC_LATEST;
    }
    if (e == SAMSA_ERR_NONE) {
        e = samsa_admin_list_offsets(s->admin, tps, n, false, s->timeout_ms,
                                     end);
    }
    free(tps);
    return e;
}

static int64_t
topic_off(const samsa_tp_results_t *r, const char *topic, int32_t partition)
{
    const samsa_tp_result_t  *it = samsa_session_tp_find(r, topic, partition);

    return it != NULL && it->err == SAMSA_ERR_NONE ? it->offset : -1;
}

/* The topic's configs set on the topic itself (Kafka's describe shows
 * those, as "Configs:"). */
static const samsa_config_resource_t *
topic_cfg_find(const samsa_config_resources_t *c, const char *topic)
{
    size_t  i;

    for (i = 0; c != NULL && i < c->n; i++) {
        if (strcmp(c->resources[i].name, topic) == 0) {
            return &c->resources[i];
        }
    }
    return NULL;
}

static bool
topic_cfg_shown(const samsa_config_entry_t *e)
{
    return e->source == SAMSA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG;
}

/* The partitions `describe` shows: all, or only those matching Kafka's
 * kafka-topics filters. */
typedef struct topic_filter {
    bool                         under_replicated;
    bool                         unavailable;
    const samsa_cluster_desc_t  *cluster;   /* the live brokers, or NULL */
} topic_filter_t;

static bool
topic_filter_any(const topic_filter_t *f)
{
    return f->under_replicated || f->unavailable;
}

static bool
topic_leader_live(const topic_filter_t *f, int32_t leader)
{
    size_t  i;

    if (leader < 0) {
        return false;
    }
    for (i = 0; f->cluster != NULL && i < f->cluster->nbrokers; i++) {
        if (f->cluster->brokers[i].id == leader) {
            return true;
        }
    }
    return f->cluster == NULL;
}

/* Kafka's PartitionDescription rules: under-replicated when the ISR is
 * smaller than the replicas, unavailable when there is no leader or the
 * leader is not a live broker. */
static bool
topic_part_shown(const topic_filter_t *f, const samsa_partition_desc_t *p)
{
    if (!topic_filter_any(f)) {
        return true;
    }
    return (f->under_replicated && p->nisr < p->nreplicas)
           || (f->unavailable && !topic_leader_live(f, p->leader));
}

static size_t
topic_parts_shown(const topic_filter_t *f, const samsa_topic_desc_t *td)
{
    size_t  k, n = 0;

    for (k = 0; k < td->npartitions; k++) {
        n += topic_part_shown(f, &td->partitions[k]);
    }
    return n;
}

static void
topic_describe_json(samsa_json_t *j, const samsa_topic_desc_t *td,
                    const samsa_tp_results_t *start,
                    const samsa_tp_results_t *end,
                    const samsa_config_resource_t *cr,
                    const topic_filter_t *f)
{
    char    id[24];
    size_t  k;

    samsa_cli_topic_id(td->topic_id, id);
    samsa_json_obj(j);
    samsa_json_kv_str(j, "name", td->name);
    samsa_json_kv_str(j, "topic_id", id);
    samsa_json_kv_bool(j, "internal", td->is_internal);
    samsa_json_key(j, "partitions");
    samsa_json_arr(j);
    for (k = 0; k < td->npartitions; k++) {
        const samsa_partition_desc_t  *p = &td->partitions[k];

        if (!topic_part_shown(f, p)) {
            continue;
        }
        samsa_json_obj(j);
        samsa_json_kv_int(j, "partition", p->partition);
        samsa_json_kv_int(j, "leader", p->leader);
        samsa_json_key(j, "replicas");
        topic_json_ids(j, p->replicas, p->nreplicas);
        samsa_json_key(j, "isr");
        topic_json_ids(j, p->isr, p->nisr);
        samsa_json_kv_int(j, "log_start_offset",
                          topic_off(start, td->name, p->partition));
        samsa_json_kv_int(j, "log_end_offset",
                          topic_off(end, td->name, p->partition));
        samsa_json_obj_end(j);
    }
    samsa_json_arr_end(j);
    samsa_json_key(j, "configs");
    samsa_json_obj(j);
    for (k = 0; cr != NULL && k < cr->nentries; k++) {
        if (topic_cfg_shown(&cr->entries[k])) {
            samsa_json_key(j, cr->entries[k].name);
            samsa_json_str(j, cr->entries[k].value);
        }
    }
    samsa_json_obj_end(j);
    samsa_json_obj_end(j);
}

static void
topic_describe_text(const samsa_topic_desc_t *td,
                    const samsa_tp_results_t *start,
                    const samsa_tp_results_t *end,
                    const samsa_config_resource_t *cr,
                    const topic_filter_t *f)
{
    static const char *const  hdr[] = { "PARTITION", "LEADER", "REPLICAS",
                                        "ISR", "LOG-START-OFFSET",
                                        "LOG-END-OFFSET" };
    samsa_table_t            *t = samsa_table_new(6, hdr);
    char                      id[24], buf[256];
    size_t                    k, shown = 0;

    samsa_cli_topic_id(td->topic_id, id);
    printf("Topic: %s\tTopicId: %s\tPartitionCount: %zu\t"
           "ReplicationFactor: %zu\tConfigs: ", td->name, id,
           td->npartitions,
           td->npartitions > 0 ? td->partitions[0].nreplicas : 0);
    for (k = 0; cr != NULL && k < cr->nentries; k++) {
        if (topic_cfg_shown(&cr->entries[k])) {
            printf("%s%s=%s", shown++ > 0 ? "," : "", cr->entries[k].name,
                   cr->entries[k].value != NULL ? cr->entries[k].value : "");
        }
    }
    printf("\n");
    for (k = 0; k < 6; k++) {
        if (k != 2 && k != 3) {
            samsa_table_align_right(t, k);
        }
    }
    for (k = 0; k < td->npartitions; k++) {
        const samsa_partition_desc_t  *p = &td->partitions[k];

        if (!topic_part_shown(f, p)) {
            continue;
        }
        samsa_table_row(t);
        samsa_table_cell(t, "%d", p->partition);
        samsa_table_cell(t, "%d", p->leader);
        samsa_table_cell(t, "%s", topic_ids(p->replicas, p->nreplicas, buf,
                                            sizeof(buf)));
        samsa_table_cell(t, "%s", topic_ids(p->isr, p->nisr, buf,
                                            sizeof(buf)));
        samsa_table_cell(t, "%lld", (long long) topic_off(start, td->name,
                                                          p->partition));
        samsa_table_cell(t, "%lld", (long long) topic_off(end, td->name,
                                                          p->partition));
    }
    samsa_table_print(t, stdout);
    samsa_table_free(t);
}

/* Configs of every described topic that exists. */
static samsa_err_t
topic_configs(samsa_session_t *s, const samsa_topic_descs_t *td,
              samsa_config_resources_t **cfgs)
{
    samsa_resource_ref_t  *refs = calloc(td->n + 1, sizeof(*refs));
    samsa_err_t            e = SAMSA_ERR_NONE;
    size_t                 i, n = 0;

    *cfgs = NULL;
    for (i = 0; i < td->n; i++) {
        if (td->topics[i].err == SAMSA_ERR_NONE) {
            refs[n].type = SAMSA_RESOURCE_TOPIC;
            refs[n++].name = td->topics[i].name;
        }
    }
    if (n > 0) {
        e = samsa_admin_describe_configs(s->admin, refs, n, s->timeout_ms,
                                         cfgs);
    }
    free(refs);
    return e;
}

static const samsa_opt_t  topic_describe_opts[] = {
    { "--under-replicated", 0, SAMSA_OPT_FLAG, NULL,
      "only partitions whose ISR is smaller than their replicas" },
    { "--under-replicated-partitions", 0, SAMSA_OPT_FLAG, NULL,
      "the same (kafka-topics' name)" },
    { "--unavailable-partitions", 0, SAMSA_OPT_FLAG, NULL,
      "only partitions without a leader, or whose leader is not a live "
      "broker" },
    { NULL, 0, SAMSA_OPT_FLAG, NULL, NULL },
};

static int
topic_describe(int argc, char **argv)
{
    samsa_session_t            s;
    samsa_topic_descs_t       *td = NULL;
    samsa_tp_results_t        *start = NULL, *end = NULL;
    samsa_config_resources_t  *cfgs = NULL;
    samsa_cluster_desc_t      *cluster = NULL;
    topic_filter_t             f;
    samsa_json_t               j;
    samsa_err_t                e;
    size_t                     i, shown = 0;
    int                        rc;

    if (!samsa_session_open(&s, &rc, "samsa topic describe",
                            "samsa topic describe [TOPIC...] [options]",
                            "Partitions (leader, replicas, ISR, log start "
                            "and end offsets) and the configs set on each "
                            "topic; every non-internal topic when none is "
                            "named (every topic with a partition filter).",
                            topic_describe_opts, argc, argv, 0, SIZE_MAX)) {
        return rc;
    }
    memset(&f, 0, sizeof(f));
    f.under_replicated = samsa_opts_has(&s.opts, "--under-replicated")
                         || samsa_opts_has(&s.opts,
                                           "--under-replicated-partitions");
    f.unavailable = samsa_opts_has(&s.opts, "--unavailable-partitions");
    e = samsa_admin_describe_topics(s.admin, s.opts.pos, s.opts.npos,
                                    s.timeout_ms, &td);
    if (e == SAMSA_ERR_NONE && f.unavailable) {
        e = samsa_admin_describe_cluster(s.admin, s.timeout_ms, &cluster);
        f.cluster = cluster;
    }
    if (e == SAMSA_ERR_NONE) {
        e = topic_offsets(&s, td, &start, &end);
    }
    if (e == SAMSA_ERR_NONE) {
        e = topic_configs(&s, td, &cfgs);
    }
    if (e != SAMSA_ERR_NONE) {
        rc = samsa_session_fail(&s, e, "cannot describe topics");
        goto out;
    }
    samsa_session_list(&s, &j);
    for (i = 0; i < td->n; i++) {
        const samsa_topic_desc_t  *t = &td->topics[i];

        if (t->err != SAMSA_ERR_NONE) {
            fprintf(stderr, "%s: topic '%s': %s: %s\n", s.cmd, t->name,
                    samsa_err_name(t->err), t->errmsg);
            rc = SAMSA_EXIT_FAILED;
            continue;
        }
        if ((s.opts.npos == 0 && t->is_internal && !topic_filter_any(&f))
            || (topic_filter_any(&f) && topic_parts_shown(&f, t) == 0)) {
            continue;
        }
        if (s.json) {
            topic_describe_json(&j, t, start, end,
                                topic_cfg_find(cfgs, t->name), &f);
        } else {
            printf("%s", shown > 0 ? "\n" : "");
            topic_describe_text(t, start, end, topic_cfg_find(cfgs, t->name),
                                &f);
        }
        shown++;
    }
    samsa_session_list_end(&s, &j, NULL);
out:
    samsa_admin_result_free(td);
    samsa_admin_result_free(cluster);
    samsa_admin_result_free(start);
    samsa_admin_result_free(end);
    samsa_admin_result_free(cfgs);
    samsa_session_close(&s);
    return rc;
}

/* ---- delete ------------------------------------------------------------- */

static const samsa_opt_t  topic_delete_opts[] = {
    { "--if-exists", 0, SAMSA_OPT_FLAG, NULL,
      "succeed if a topic does not exist" },
    { NULL, 0, SAMSA_OPT_FLAG, NULL, NULL },
};

static int
topic_delete(int argc, char **argv)
{
    samsa_session_t       s;
    samsa_admin_items_t  *res = NULL;
    samsa_err_t           e;
    int                   rc;

    if (!samsa_session_open(&s, &rc, "samsa topic delete",
                            "samsa topic delete TOPIC... [options]",
                            "Delete topics (DeleteTopics).",
                            topic_delete_opts, argc, argv, 1, SIZE_MAX)) {
        return rc;
    }
    e = samsa_admin_delete_topics(s.admin, s.opts.pos, s.opts.npos,
                                  s.timeout_ms, &res);
    if (e != SAMSA_ERR_NONE) {
        rc = samsa_session_fail(&s, e, "cannot delete topics");
    } else {
        rc = topic_items_report(
            &s, res, "Deleted topic",
            samsa_opts_has(&s.opts, "--if-exists")
                ? SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION : SAMSA_ERR_NONE,
            "No such topic:");
    }
    samsa_admin_result_free(res);
    samsa_session_close(&s);
    return rc;
}

/* ---- alter-config ------------------------------------------------------- */

static const samsa_opt_t  topic_alter_opts[] = {
    { "--set", 's', SAMSA_OPT_MULTI, "KEY=VALUE", "set a topic config" },
    { "--delete", 'd', SAMSA_OPT_MULTI, "KEY",
      "remove a topic config (back to the broker default)" },
    { "--validate-only", 0, SAMSA_OPT_FLAG, NULL,
      "check the change, apply nothing" },
    { "--legacy", 0, SAMSA_OPT_FLAG, NULL,
      "use the old AlterConfigs (replaces the topic's whole set) instead "
      "of IncrementalAlterConfigs" },
    { NULL, 0, SAMSA_OPT_FLAG, NULL, NULL },
};

/* Legacy AlterConfigs replaces every topic config: start from the
 * topic's current ones, then apply ops on top.  *merged must be freed. */
static samsa_err_t
topic_legacy_merge(samsa_session_t *s, const char *topic,
                   const samsa_alter_op_t *ops, size_t nops,
                   samsa_alter_op_t **merged, size_t *nmerged)
{
    samsa_resource_ref_t       ref = { SAMSA_RESOURCE_TOPIC, topic };
    samsa_config_resources_t  *cur = NULL;
    samsa_alter_op_t          *m;
    samsa_err_t                e;
    size_t                     i, k, n = 0;

    e = samsa_admin_describe_configs(s->admin, &ref, 1, s->timeout_ms, &cur);
    if (e == SAMSA_ERR_NONE && cur->n == 1) {
        e = cur->resources[0].err;
    }
    if (e != SAMSA_ERR_NONE) {
        samsa_admin_result_free(cur);
        return e;
    }
    m = calloc(cur->resources[0].nentries + nops + 1, sizeof(*m));
    for (i = 0; i < cur->resources[0].nentries; i++) {
        const samsa_config_entry_t  *ce = &cur->resources[0].entries[i];

        if (topic_cfg_shown(ce)) {
            m[n].name = strdup(ce->name);
            m[n++].value = ce->value != NULL ? strdup(ce->value) : NULL;
        }
    }
    samsa_admin_result_free(cur);
    for (i = 0; i < nops; i++) {
        for (k = 0; k < n && strcmp(m[k].name, ops[i].name) != 0; k++) {
        }
        if (k == n) {
            m[n++].name = strdup(ops[i].name);
        }
        free((char *) m[k].value);
        m[k].value = ops[i].op == SAMSA_ALTER_OP_SET ? strdup(ops[i].value)
                                                     : NULL;
        m[k].op = ops[i].op;
    }
    for (i = k = 0; i < n; i++) {           /* deleted ones are left out */
        if (m[i].op == SAMSA_ALTER_OP_DELETE) {
            free((char *) m[i].name);
        } else {
            m[k++] = m[i];
        }
    }
    *merged = m;
    *nmerged = k;
    return SAMSA_ERR_NONE;
}

static void
topic_ops_free(samsa_alter_op_t *ops, size_t n)
{
    size_t  i;

    for (i = 0; ops != NULL && i < n; i++) {
        free((char *) ops[i].name);
        free((char *) ops[i].value);
    }
    free(ops);
}

/* --set and --delete as ops (copies). */
static int
topic_alter_ops(samsa_session_t *s, samsa_alter_op_t **opsp, size_t *np)
{
    const char *const  *sets, *const *dels;
    samsa_alter_op_t   *ops;
    const char         *v;
    char               *key, err[256];
    size_t              nset, ndel, i, n = 0;

    sets = samsa_opts_all(&s->opts, "--set", &nset);
    dels = samsa_opts_all(&s->opts, "--delete", &ndel);
    ops = calloc(nset + ndel + 1, sizeof(*ops));
    *opsp = ops;
    *np = 0;
    for (i = 0; i < nset; i++) {
        if (samsa_opts_kv("--set", sets[i], &key, &v, err, sizeof(err))
            != 0) {
            return samsa_session_usage(s, "%s", err);
        }
        ops[n].name = key;
        ops[n].op = SAMSA_ALTER_OP_SET;
        ops[n].value = strdup(v);
        *np = ++n;
    }
    for (i = 0; i < ndel; i++) {
        ops[n].name = strdup(dels[i]);
        ops[n].op = SAMSA_ALTER_OP_DELETE;
        *np = ++n;
    }
    if (n == 0) {
        return samsa_session_usage(s, "nothing to change: give --set "
                                   "KEY=VALUE and/or --delete KEY");
    }
    return SAMSA_EXIT_OK;
}

static int
topic_alter_config(int argc, char **argv)
{
    samsa_session_t          s;
    samsa_alter_resource_t   r;
    samsa_alter_op_t        *ops = NULL, *merged = NULL;
    samsa_admin_items_t     *res = NULL;
    size_t                   nops = 0, nmerged = 0;
    samsa_err_t              e;
    bool                     validate;
    int                      rc;

    rc = samsa_session_parse(&s, "samsa topic alter-config",
                             "samsa topic alter-config TOPIC (--set K=V | "
                             "--delete K)... [options]",
                             "Change a topic's configs "
                             "(IncrementalAlterConfigs).",
                             topic_alter_opts, argc, argv, 1, 1);
    if (rc >= 0) {
        samsa_session_close(&s);
        return rc;
    }
    rc = topic_alter_ops(&s, &ops, &nops);
    if (rc != SAMSA_EXIT_OK || (rc = samsa_session_connect(&s))
                               != SAMSA_EXIT_OK) {
        goto out;
    }
    validate = samsa_opts_has(&s.opts, "--validate-only");
    r.type = SAMSA_RESOURCE_TOPIC;
    r.name = s.opts.pos[0];
    r.ops = ops;
    r.nops = nops;
    if (samsa_opts_has(&s.opts, "--legacy")) {
        e = topic_legacy_merge(&s, r.name, ops, nops, &merged, &nmerged);
        r.ops = merged;
        r.nops = nmerged;
        if (e == SAMSA_ERR_NONE) {
            e = samsa_admin_alter_configs(s.admin, &r, 1, validate,
                                          s.timeout_ms, &res);
        }
    } else {
        e = samsa_admin_incremental_alter_configs(s.admin, &r, 1, validate,
                                                  s.timeout_ms, &res);
    }
    if (e != SAMSA_ERR_NONE) {
        rc = samsa_session_fail(&s, e, "cannot alter the configs of '%s'",
                                r.name);
    } else {
        rc = topic_items_report(&s, res, validate ? "Valid: would alter "
                                "configs of topic" : "Altered configs of "
                                "topic", SAMSA_ERR_NONE, NULL);
    }
out:
    topic_ops_free(ops, nops);
    topic_ops_free(merged, nmerged);
    samsa_admin_result_free(res);
    samsa_session_close(&s);
    return rc;
}

/* ---- create-partitions -------------------------------------------------- */

static const samsa_opt_t  topic_parts_opts[] = {
    { "--partitions", 'p', SAMSA_OPT_VALUE, "N",
      "the new total number of partitions (required)" },
    { "--validate-only", 0, SAMSA_OPT_FLAG, NULL,
      "check the change, apply nothing" },
    { NULL, 0, SAMSA_OPT_FLAG, NULL, NULL },
};

static int
topic_create_partitions(int argc, char **argv)
{
    samsa_session_t       s;
    samsa_admin_items_t  *res = NULL;
    const char           *name;
    char                  err[256];
    int64_t               n;
    int32_t               count;
    samsa_err_t           e;
    int                   rc;

    rc = samsa_session_parse(&s, "samsa topic create-partitions",
                             "samsa topic create-partitions TOPIC "
                             "--partitions N [options]",
                             "Grow a topic to N partitions "
                             "(CreatePartitions).",
                             topic_parts_opts, argc, argv, 1, 1);
    if (rc >= 0) {
        samsa_session_close(&s);
        return rc;
    }
    if (!samsa_opts_has(&s.opts, "--partitions")) {
        rc = samsa_session_usage(&s, "--partitions is required");
    } else if (samsa_opts_i64(&s.opts, "--partitions", 1, INT32_MAX, 1, &n,
                              err, sizeof(err)) != 0) {
        rc = samsa_session_usage(&s, "%s", err);
    } else {
        rc = samsa_session_connect(&s);
    }
    if (rc != SAMSA_EXIT_OK) {
        samsa_session_close(&s);
        return rc;
    }
    name = s.opts.pos[0];
    count = (int32_t) n;
    e = samsa_admin_create_partitions(s.admin, &name, &count, 1,
                                      samsa_opts_has(&s.opts,
                                                     "--validate-only"),
                                      s.timeout_ms, &res);
    if (e != SAMSA_ERR_NONE) {
        rc = samsa_session_fail(&s, e, "cannot add partitions to '%s'", name);
    } else {
        rc = topic_items_report(&s, res, "Partitions added to topic",
                                SAMSA_ERR_NONE, NULL);
    }
    samsa_admin_result_free(res);
    samsa_session_close(&s);
    return rc;
}

/* ---- delete-records ----------------------------------------------------- */

static const samsa_opt_t  topic_delrec_opts[] = {
    { "--partition", 'p', SAMSA_OPT_MULTI, "P",
      "partition to truncate (default: every partition)" },
    { "--before", 0, SAMSA_OPT_VALUE, "OFFSET",
      "delete records before this offset (default: the log end)" },
    { NULL, 0, SAMSA_OPT_FLAG, NULL, NULL },
};

static int
topic_delete_records(int argc, char **argv)
{
    static const char *const  hdr[] = { "PARTITION", "LOW-WATERMARK",
                                        "ERROR" };
    samsa_session_t           s;
    samsa_topic_descs_t      *td = NULL;
    samsa_tp_results_t       *res = NULL;
    samsa_tp_spec_t          *tps = NULL;
    samsa_table_t            *t;
    samsa_json_t              j;
    const char *const        *ps;
    const char               *topic;
    char                      err[256];
    int64_t                   before, p;
    size_t                    nps, i, n = 0;
    samsa_err_t               e;
    int                       rc;

    rc = samsa_session_parse(&s, "samsa topic delete-records",
                             "samsa topic delete-records TOPIC [options]",
                             "Delete the records before an offset "
                             "(DeleteRecords).",
                             topic_delrec_opts, argc, argv, 1, 1);
    if (rc >= 0) {
        samsa_session_close(&s);
        return rc;
    }
    topic = s.opts.pos[0];
    ps = samsa_opts_all(&s.opts, "--partition", &nps);
    tps = calloc(nps + 1, sizeof(*tps));
    if (samsa_opts_i64(&s.opts, "--before", 0, INT64_MAX, -1, &before, err,
                       sizeof(err)) != 0) {
        rc = samsa_session_usage(&s, "%s", err);
        goto out;
    }
    for (i = 0; i < nps; i++, n++) {
        if (samsa_opts_parse_i64("--partition", ps[i], 0, INT32_MAX, &p, err,
                                 sizeof(err)) != 0) {
            rc = samsa_session_usage(&s, "%s", err);
            goto out;
        }
        tps[n] = (samsa_tp_spec_t) { topic, (int32_t) p, before };
    }
    if ((rc = samsa_session_connect(&s)) != SAMSA_EXIT_OK) {
        goto out;
    }
    if (n == 0) {
        if ((rc = samsa_session_topic(&s, topic, &td)) != SAMSA_EXIT_OK) {
            goto out;
        }
        free(tps);
        tps = calloc(td->topics[0].npartitions + 1, sizeof(*tps));
        for (i = 0; i < td->topics[0].npartitions; i++, n++) {
            tps[n] = (samsa_tp_spec_t) {
                topic, td->topics[0].partitions[i].partition, before };
        }
    }
    e = samsa_admin_delete_records(s.admin, tps, n, s.timeout_ms, &res);
    if (e != SAMSA_ERR_NONE) {
        rc = samsa_session_fail(&s, e, "cannot delete records of '%s'",
                                topic);
        goto out;
    }
    t = samsa_table_new(3, hdr);
    samsa_table_align_right(t, 0);
    samsa_table_align_right(t, 1);
    samsa_session_list(&s, &j);
    for (i = 0; i < res->n; i++) {
        const samsa_tp_result_t  *it = &res->items[i];

        if (it->err != SAMSA_ERR_NONE) {
            rc = samsa_session_tp_fail(&s, it->topic, it->partition,
                                       it->err, it->errmsg);
        }
        if (s.json) {
            samsa_json_obj(&j);
            samsa_json_kv_int(&j, "partition", it->partition);
            samsa_json_kv_int(&j, "low_watermark", it->offset);
            samsa_session_json_err(&j, it->err);
            samsa_json_obj_end(&j);
        }
        samsa_table_row(t);
        samsa_table_cell(t, "%d", it->partition);
        samsa_table_cell(t, "%lld", (long long) it->offset);
        samsa_table_cell(t, "%s", it->err != SAMSA_ERR_NONE
                                      ? samsa_err_name(it->err) : "-");
    }
    samsa_session_list_end(&s, &j, t);
out:
    free(tps);
    samsa_admin_result_free(td);
    samsa_admin_result_free(res);
    samsa_session_close(&s);
    return rc;
}

/* ---- dispatch ----------------------------------------------------------- */

static const samsa_cli_sub_t  topic_subs[] = {
    { "create", topic_create, "create a topic" },
    { "list", topic_list, "list topics" },
    { "describe", topic_describe,
      "partitions, leaders, replicas, ISR, offsets, configs" },
    { "delete", topic_delete, "delete topics" },
    { "alter-config", topic_alter_config, "set or delete topic configs" },
    { "create-partitions", topic_create_partitions,
      "grow a topic's partition count" },
    { "delete-records", topic_delete_records,
      "delete records before an offset" },
    { NULL, NULL, NULL },
};

int
samsa_cmd_topic(int argc, char **argv)
{
    return samsa_cli_dispatch("samsa topic", topic_subs, argc, argv);
}
