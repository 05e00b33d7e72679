/*
 * cli/cmd_cluster.c - "samsa cluster info": the cluster id, the active
 * controller, the metadata quorum (DescribeQuorum; none on a single node)
 * the brokers (DescribeCluster, or Metadata on brokers without it) and
 * the partitions under-replicated or offline (Metadata), through
 * libsamsa's admin client.
 * Threads: main.
 */
#include <stdio.h>
#include <string.h>

#include <samsa/admin.h>

#include "cli/cli.h"
#include "cli/json.h"
#include "cli/session.h"
#include "cli/table.h"

/* The partitions of every topic (Metadata), as an operator checks them
 * first: how many, how many under-replicated (ISR smaller than the
 * replicas) and offline (no leader, or a leader that is not a live
 * broker: Kafka's unavailable partitions). */
typedef struct cluster_parts {
    size_t  partitions;
    size_t  under_replicated;
    size_t  offline;
} cluster_parts_t;

static bool
cluster_fenced(const samsa_cluster_desc_t *cd, size_t i)
{
    return cd->broker_fenced != NULL && cd->broker_fenced[i];
}

static bool
cluster_broker_live(const samsa_cluster_desc_t *cd, int32_t id)
{
    size_t  i;

    for (i = 0; i < cd->nbrokers; i++) {
        if (cd->brokers[i].id == id) {
            return !cluster_fenced(cd, i);
        }
    }
    return false;
}

static void
cluster_parts_count(const samsa_cluster_desc_t *cd,
                    const samsa_topic_descs_t *td, cluster_parts_t *out)
{
    const samsa_partition_desc_t  *p;
    size_t                         i, k;

    memset(out, 0, sizeof(*out));
    for (i = 0; i < td->n; i++) {
        for (k = 0; k < td->topics[i].npartitions; k++) {
            p = &td->topics[i].partitions[k];
            out->partitions++;
            out->under_replicated += p->nisr < p->nreplicas;
            out->offline += p->leader < 0
                            || !cluster_broker_live(cd, p->leader);
        }
    }
}

static void
cluster_json(const samsa_cluster_desc_t *cd, const samsa_quorum_info_t *q,
             samsa_err_t qerr, const cluster_parts_t *parts)
{
    samsa_json_t  j;
    size_t        i;

    samsa_json_init(&j, stdout);
    samsa_json_obj(&j);
    samsa_json_kv_str(&j, "cluster_id", cd->cluster_id);
    samsa_json_kv_int(&j, "controller_id", cd->controller_id);
    samsa_json_key(&j, "quorum");
    if (q == NULL) {
        /* no quorum answered (a single node does not serve DescribeQuorum):
         * null, and why */
        samsa_json_null(&j);
        samsa_json_kv_str(&j, "quorum_error", samsa_err_name(qerr));
    } else {
        samsa_json_obj(&j);
        samsa_json_kv_int(&j, "leader", q->leader_id);
        samsa_json_kv_int(&j, "leader_epoch", q->leader_epoch);
        samsa_json_kv_int(&j, "high_watermark", q->high_watermark);
        samsa_json_key(&j, "voters");
        samsa_json_arr(&j);
        for (i = 0; i < q->nvoters; i++) {
            samsa_json_int(&j, q->voters[i]);
        }
        samsa_json_arr_end(&j);
        samsa_json_obj_end(&j);
    }
    samsa_json_key(&j, "brokers");
    samsa_json_arr(&j);
    for (i = 0; i < cd->nbrokers; i++) {
        samsa_json_obj(&j);
        samsa_json_kv_int(&j, "id", cd->brokers[i].id);
        samsa_json_kv_str(&j, "host", cd->brokers[i].host);
        samsa_json_kv_int(&j, "port", cd->brokers[i].port);
        samsa_json_kv_str(&j, "rack", cd->brokers[i].rack);
        /* fenced ones from DescribeCluster v2 (KIP-1073) only */
        samsa_json_kv_bool(&j, "fenced", cluster_fenced(cd, i));
        samsa_json_obj_end(&j);
    }
    samsa_json_arr_end(&j);
    samsa_json_kv_int(&j, "partitions", (int64_t) parts->partitions);
    samsa_json_kv_int(&j, "under_replicated_partitions",
                      (int64_t) parts->under_replicated);
    samsa_json_kv_int(&j, "offline_partitions", (int64_t) parts->offline);
    samsa_json_obj_end(&j);
    samsa_json_end(&j);
}

static void
cluster_text(const samsa_cluster_desc_t *cd, const samsa_quorum_info_t *q,
             samsa_err_t qerr, const cluster_parts_t *parts)
{
    static const char *const  hdr[] = { "ID", "HOST", "PORT", "RACK",
                                        "ROLE" };
    samsa_table_t            *t = samsa_table_new(5, hdr);
    size_t                    i, fenced = 0;

    for (i = 0; i < cd->nbrokers; i++) {
        fenced += cluster_fenced(cd, i);
    }
    printf("Cluster id: %s\nController: %d\nBrokers: %zu (%zu fenced)\n\n",
           cd->cluster_id != NULL ? cd->cluster_id : "-", cd->controller_id,
           cd->nbrokers, fenced);
    if (q == NULL) {
        printf("Quorum: none (%s)\n\n", samsa_err_name(qerr));
    } else {
        printf("Quorum: leader %d, epoch %d, high watermark %lld, voters",
               q->leader_id, q->leader_epoch, (long long) q->high_watermark);
        for (i = 0; i < q->nvoters; i++) {
            printf("%s%d", i == 0 ? " " : ",", q->voters[i]);
        }
        printf("\n\n");
    }
    samsa_table_align_right(t, 0);
    samsa_table_align_right(t, 2);
    for (i = 0; i < cd->nbrokers; i++) {
        samsa_table_row(t);
        samsa_table_cell(t, "%d", cd->brokers[i].id);
        samsa_table_cell(t, "%s", cd->brokers[i].host);
        samsa_table_cell(t, "%d", cd->brokers[i].port);
        samsa_table_cell(t, "%s", cd->brokers[i].rack != NULL
                                      ? cd->brokers[i].rack : "-");
        samsa_table_cell(t, "%s%s", cd->brokers[i].id == cd->controller_id
                                        ? "controller" : "broker",
                         cluster_fenced(cd, i) ? " (fenced)" : "");
    }
    samsa_table_print(t, stdout);
    samsa_table_free(t);
    printf("\nPartitions: %zu (under-replicated %zu, offline %zu)\n",
           parts->partitions, parts->under_replicated, parts->offline);
}

static int
cluster_info(int argc, char **argv)
{
    samsa_session_t        s;
    samsa_cluster_desc_t  *cd = NULL;
    samsa_quorum_info_t   *q = NULL;
    samsa_topic_descs_t   *td = NULL;
    cluster_parts_t        parts;
    samsa_err_t            e, qerr = SAMSA_ERR_NONE;
    int                    rc;

    if (!samsa_session_open(&s, &rc, "samsa cluster info",
                            "samsa cluster info [options]",
                            "The cluster id, controller, metadata quorum, "
                            "brokers and how many partitions are under-"
                            "replicated or offline (DescribeCluster, "
                            "DescribeQuorum, Metadata).", NULL, argc, argv,
                            0, 0)) {
        return rc;
    }
    /* the fenced brokers too where the broker serves DescribeCluster v2 */
    e = samsa_admin_describe_cluster_fenced(s.admin, s.timeout_ms, &cd);
    if (e == SAMSA_ERR_UNSUPPORTED_VERSION) {
        e = samsa_admin_describe_cluster(s.admin, s.timeout_ms, &cd);
    }
    if (e == SAMSA_ERR_NONE) {
        /* any error here only means no quorum to show: printed as such */
        qerr = samsa_admin_describe_quorum(s.admin, s.timeout_ms, &q);
    }
    if (e == SAMSA_ERR_NONE && q != NULL && q->leader_id >= 0) {
        /* the active controller: DescribeCluster's ControllerId is a
         * broker when the active controller is controller-only (Kafka's
         * brokers answer a live broker, which forwards) */
        cd->controller_id = q->leader_id;
    }
    if (e == SAMSA_ERR_NONE) {
        e = samsa_admin_describe_topics(s.admin, NULL, 0, s.timeout_ms, &td);
    }
    if (e != SAMSA_ERR_NONE) {
        rc = samsa_session_fail(&s, e, "cannot describe the cluster");
    } else {
        cluster_parts_count(cd, td, &parts);
        if (s.json) {
            cluster_json(cd, q, qerr, &parts);
        } else {
            cluster_text(cd, q, qerr, &parts);
        }
    }
    samsa_admin_result_free(td);
    samsa_admin_result_free(q);
    samsa_admin_result_free(cd);
    samsa_session_close(&s);
    return rc;
}

static const samsa_cli_sub_t  cluster_subs[] = {
    { "info", cluster_info, "cluster id, controller, brokers" },
    { NULL, NULL, NULL },
};

int
samsa_cmd_cluster(int argc, char **argv)
{
    return samsa_cli_dispatch("samsa cluster", cluster_subs, argc, argv);
}
