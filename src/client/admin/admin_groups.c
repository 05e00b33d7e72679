/*
 * client/admin/admin_groups.c - the admin client's consumer-group calls: list,
 * describe (with assignments decoded from Kafka's consumer protocol),
 * delete, and the group's committed offsets (fetch, alter, delete).
 * See samsa/admin.h.
 * Threads: any application thread, under the handle's call lock.
 */
#include <samsa/admin.h>

#include <stdlib.h>
#include <string.h>

#include "client/admin/admin_int.h"
#include "proto/gen/DeleteGroups.h"
#include "proto/gen/ConsumerGroupDescribe.h"
#include "proto/gen/DescribeGroups.h"
#include "proto/gen/ListGroups.h"
#include "proto/gen/OffsetCommit.h"
#include "proto/gen/OffsetDelete.h"
#include "proto/gen/OffsetFetch.h"
#include "proto/gen/apis.h"
#include "util/alloc.h"
#include "util/time.h"

/* ---- ListGroups -------------------------------------------------------- */

static bool
admin_state_wanted(const char *const *states, size_t nstates,
                   samsa_slice_t state)
{
    size_t  i;

    if (nstates == 0) {
        return true;
    }
    for (i = 0; i < nstates; i++) {
        if (state.len == strlen(states[i])
            && strncasecmp(state.ptr, states[i], state.len) == 0) {
            return true;
        }
    }
    return false;
}

/* ListGroups at one broker, appending to res (room for cap entries). */
static samsa_err_t
admin_list_groups_one(samsa_admin_t *a, int32_t node,
                      const char *const *states, size_t nstates,
                      int64_t deadline, samsa_arena_t *scratch,
                      samsa_arena_t *arena, samsa_group_listings_t *res,
                      size_t *cap)
{
    samsa_ListGroupsRequest_t   req;
    samsa_ListGroupsResponse_t  resp;
    samsa_slice_t              *sf;
    samsa_group_listing_t      *g, *grown;
    samsa_admin_rpc_t           rpc;
    samsa_err_t                 err;
    size_t                      i;

    err = samsa_admin_rpc_begin(a, &rpc, node, SAMSA_API_ListGroups, 0, 5,
                                deadline);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    samsa_ListGroupsRequest_init(&req);
    sf = samsa_arena_calloc(scratch, nstates + 1, sizeof(*sf));
    for (i = 0; i < nstates; i++) {
        sf[i] = samsa_slice_cstr(states[i]);
    }
    req.StatesFilter = sf;
    req.StatesFilter_cnt = (int32_t) nstates;
    err = samsa_admin_rpc_run(a, &rpc, samsa_ListGroupsRequest_encode_any, &req,
                              samsa_ListGroupsResponse_decode_any, &resp,
                              deadline, scratch);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    if (resp.ErrorCode != 0 && res->err == SAMSA_ERR_NONE) {
        res->err = (samsa_err_t) resp.ErrorCode;
        res->errmsg = samsa_err_text(res->err);
    }
    for (i = 0; i < (size_t) resp.Groups_cnt; i++) {
        const samsa_ListedGroup_t  *lg = &resp.Groups[i];

        /* before v4 the broker cannot filter: do it here (no state known
         * means the filter cannot be applied: keep the group) */
        if (rpc.version >= 4 && !admin_state_wanted(states, nstates,
                                                    lg->GroupState)) {
            continue;
        }
        if (res->n == *cap) {
            *cap = *cap * 2 + 8;
            grown = samsa_arena_calloc(arena, *cap, sizeof(*grown));
            if (res->n > 0) {
                memcpy(grown, res->groups, res->n * sizeof(*grown));
            }
            res->groups = grown;
        }
        g = &res->groups[res->n++];
        g->group_id = samsa_admin_str(arena, lg->GroupId);
        g->protocol_type = samsa_admin_str(arena, lg->ProtocolType);
        g->state = samsa_admin_name(arena, lg->GroupState);
        g->type = samsa_admin_name(arena, lg->GroupType);
        g->coordinator = node;
    }
    return SAMSA_ERR_NONE;
}

static int
admin_cmp_listing(const void *x, const void *y)
{
    const samsa_group_listing_t  *a = x, *b = y;

    return strcmp(a->group_id, b->group_id);
}

samsa_err_t
samsa_admin_list_groups(samsa_admin_t *a, const char *const *states,
                        size_t nstates, int64_t timeout_ms,
                        samsa_group_listings_t **resultp)
{
    samsa_MetadataResponse_t  md;
    samsa_arena_t             scratch = SAMSA_ARENA_INIT, *arena;
    samsa_group_listings_t   *res;
    samsa_err_t               err;
    int64_t                   deadline;
    const char               *const none[1] = { NULL };
    size_t                    cap = 0;
    int32_t                   i;

    *resultp = NULL;
    deadline = samsa_admin_deadline(a, timeout_ms);
    if (nstates > 0 && states == NULL) {
        return SAMSA_ERR__INVALID_ARG;
    }
    res = samsa_admin_result_new(sizeof(*res), &arena);
    pthread_mutex_lock(&a->lock);
    /* every broker coordinates some groups: ask each (Java does too) */
    err = samsa_admin_metadata(a, none, 0, deadline, &scratch, &md);
    for (i = 0; err == SAMSA_ERR_NONE && i < md.Brokers_cnt; i++) {
        err = admin_list_groups_one(a, md.Brokers[i].NodeId, states, nstates,
                                    deadline, &scratch, arena, res, &cap);
    }
    pthread_mutex_unlock(&a->lock);
    samsa_arena_fini(&scratch);
    if (err != SAMSA_ERR_NONE) {
        samsa_admin_result_free(res);
        return err;
    }
    if (res->n > 0) {
        qsort(res->groups, res->n, sizeof(*res->groups), admin_cmp_listing);
    }
    *resultp = res;
    return SAMSA_ERR_NONE;
}

/* ---- DescribeGroups ---------------------------------------------------- */

bool
samsa_admin_decode_assignment(samsa_arena_t *arena, samsa_slice_t data,
                              samsa_group_member_t *m)
{
    samsa_rd_t      rd;
    samsa_slice_t   topic;
    const char     *tname;
    int32_t         nt, np, i, j;
    size_t          cap = 0;
    samsa_topic_partition_t  *tp;

    if (data.ptr == NULL || data.len < 2) {
        return data.ptr != NULL && data.len == 0;   /* empty: no partitions */
    }
    samsa_rd_init(&rd, data.ptr, data.len);
    if (samsa_rd_i16(&rd) < 0) {
        return false;
    }
    nt = samsa_rd_array_cnt(&rd, false, true, 6);
    for (i = 0; i < nt && rd.err == SAMSA_ERR_NONE; i++) {
        topic = samsa_rd_str(&rd);
        np = samsa_rd_array_cnt(&rd, false, false, 4);
        if (rd.err != SAMSA_ERR_NONE) {
            break;
        }
        tname = samsa_admin_str(arena, topic);
        tp = samsa_arena_calloc(arena, cap + (size_t) np + 1, sizeof(*tp));
        if (m->nassignment > 0) {
            memcpy(tp, m->assignment, m->nassignment * sizeof(*tp));
        }
        m->assignment = tp;
        cap += (size_t) np;
        for (j = 0; j < np; j++) {
            tp[m->nassignment].topic = tname;
            tp[m->nassignment++].partition = samsa_rd_i32(&rd);
        }
    }
    return rd.err == SAMSA_ERR_NONE;
}

static int
admin_cmp_tp(const void *x, const void *y)
{
    const samsa_topic_partition_t  *a = x, *b = y;

    return samsa_admin_cmp_tp(a->topic, a->partition, b->topic, b->partition);
}

static void
admin_group_desc(samsa_arena_t *arena, samsa_group_desc_t *gd,
                 const samsa_DescribedGroup_t *g, int32_t coordinator)
{
    const samsa_DescribedGroupMember_t  *dm;
    samsa_group_member_t                *m;
    bool                                 consumer;
    int32_t                              j;

    gd->err = (samsa_err_t) g->ErrorCode;
    gd->errmsg = samsa_admin_errmsg(arena, gd->err, SAMSA_SLICE_NULL);
    gd->type = "classic";
    gd->state = samsa_admin_str(arena, g->GroupState);
    gd->state = gd->state != NULL && gd->state[0] != '\0' ? gd->state
                                                          : "Dead";
    gd->protocol_type = samsa_admin_str(arena, g->ProtocolType);
    gd->protocol = samsa_admin_str(arena, g->ProtocolData);
    gd->coordinator = coordinator;
    consumer = samsa_slice_eq_cstr(g->ProtocolType, "consumer");
    gd->members = samsa_admin_items(arena, g->Members_cnt, sizeof(*gd->members),
                                    &gd->nmembers);
    for (j = 0; j < (int32_t) gd->nmembers; j++) {
        dm = &g->Members[j];
        m = &gd->members[j];
        m->member_id = samsa_admin_str(arena, dm->MemberId);
        m->group_instance_id = samsa_admin_str(arena, dm->GroupInstanceId);
        m->client_id = samsa_admin_str(arena, dm->ClientId);
        m->client_host = samsa_admin_str(arena, dm->ClientHost);
        if (consumer) {
            m->assignment_decoded = samsa_admin_decode_assignment(
                arena, dm->MemberAssignment, m);
            if (!m->assignment_decoded) {
                m->nassignment = 0;
            }
        }
        if (m->nassignment > 0) {
            qsort(m->assignment, m->nassignment, sizeof(*m->assignment),
                  admin_cmp_tp);
        }
    }
}

/* A consumer-type group (KIP-848) from ConsumerGroupDescribe: members
 * with their current assignments (topic names given by the
 * coordinator). */
static void
admin_consumer_group_desc(samsa_arena_t *arena, samsa_group_desc_t *gd,
                  const samsa_CGDescribedGroup_t *g, int32_t coordinator)
{
    const samsa_CGDescribedMember_t  *dm;
    samsa_group_member_t             *m;
    size_t                            total;
    int32_t                           i, j, k;

    gd->err = SAMSA_ERR_NONE;
    gd->errmsg = NULL;
    gd->type = "consumer";
    gd->state = samsa_admin_str(arena, g->GroupState);
    gd->protocol_type = "consumer";
    gd->protocol = samsa_admin_str(arena, g->AssignorName);
    gd->coordinator = coordinator;
    gd->members = samsa_admin_items(arena, g->Members_cnt, sizeof(*gd->members),
                                    &gd->nmembers);
    for (i = 0; i < (int32_t) gd->nmembers; i++) {
        const samsa_CGDescribedAssignment_t  *as;

        dm = &g->Members[i];
        m = &gd->members[i];
        as = &dm->Assignment;
        m->member_id = samsa_admin_str(arena, dm->MemberId);
        m->group_instance_id = samsa_admin_str(arena, dm->InstanceId);
        m->client_id = samsa_admin_str(arena, dm->ClientId);
        m->client_host = samsa_admin_str(arena, dm->ClientHost);
        total = 0;
        for (j = 0; j < as->TopicPartitions_cnt; j++) {
            if (as->TopicPartitions[j].Partitions_cnt > 0) {
                total += (size_t) as->TopicPartitions[j].Partitions_cnt;
            }
        }
        m->assignment = samsa_arena_calloc(arena, total + 1,
                                           sizeof(*m->assignment));
        for (j = 0; j < as->TopicPartitions_cnt; j++) {
            const samsa_CGDescribedTopicPartitions_t  *tp =
                &as->TopicPartitions[j];
            const char  *name = samsa_admin_str(arena, tp->TopicName);

            for (k = 0; k < tp->Partitions_cnt; k++) {
                m->assignment[m->nassignment].topic = name;
                m->assignment[m->nassignment++].partition = tp->Partitions[k];
            }
        }
        m->assignment_decoded = true;
        if (m->nassignment > 0) {
            qsort(m->assignment, m->nassignment, sizeof(*m->assignment),
                  admin_cmp_tp);
        }
    }
}

/* ConsumerGroupDescribe: true when group_id is a consumer-type group
 * (gd filled); false for a classic or unknown group, or a coordinator
 * without the API (then DescribeGroups answers). */
static bool
admin_describe_consumer_group(samsa_admin_t *a, const char *group_id, int32_t node,
                      int64_t deadline, samsa_arena_t *scratch,
                      samsa_arena_t *arena, samsa_group_desc_t *gd)
{
    samsa_ConsumerGroupDescribeRequest_t   req;
    samsa_ConsumerGroupDescribeResponse_t  resp;
    samsa_slice_t                          id = samsa_slice_cstr(group_id);
    samsa_admin_rpc_t                      rpc;
    samsa_err_t                            err;

    if (samsa_admin_rpc_begin(a, &rpc, node, SAMSA_API_ConsumerGroupDescribe,
                              0, 1, deadline) != SAMSA_ERR_NONE) {
        return false;
    }
    samsa_ConsumerGroupDescribeRequest_init(&req);
    req.GroupIds = &id;
    req.GroupIds_cnt = 1;
    err = samsa_admin_rpc_run(a, &rpc,
                              samsa_ConsumerGroupDescribeRequest_encode_any,
                              &req,
                              samsa_ConsumerGroupDescribeResponse_decode_any,
                              &resp, deadline, scratch);
    if (err != SAMSA_ERR_NONE || resp.Groups_cnt != 1
        || resp.Groups[0].ErrorCode != 0) {
        return false;           /* GROUP_ID_NOT_FOUND: classic or none */
    }
    admin_consumer_group_desc(arena, gd, &resp.Groups[0], node);
    return true;
}

static samsa_err_t
admin_describe_group(samsa_admin_t *a, const char *group_id,
                     int64_t deadline, samsa_arena_t *scratch,
                     samsa_arena_t *arena, samsa_group_desc_t *gd)
{
    samsa_DescribeGroupsRequest_t   req;
    samsa_DescribeGroupsResponse_t  resp;
    samsa_slice_t                   id = samsa_slice_cstr(group_id);
    samsa_admin_rpc_t               rpc;
    samsa_err_t                     err;
    int32_t                         node = -1;

    gd->group_id = samsa_arena_strndup(arena, group_id, strlen(group_id));
    gd->state = "Dead";
    gd->coordinator = -1;
    err = samsa_admin_coordinator(a, group_id, deadline, &node);
    if (err == SAMSA_ERR_NONE
        && admin_describe_consumer_group(a, group_id, node, deadline, scratch, arena,
                                 gd)) {
        return SAMSA_ERR_NONE;
    }
    if (err == SAMSA_ERR_NONE) {
        err = samsa_admin_rpc_begin(a, &rpc, node, SAMSA_API_DescribeGroups, 0,
                                    5, deadline);
    }
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    samsa_DescribeGroupsRequest_init(&req);
    req.Groups = &id;
    req.Groups_cnt = 1;
    err = samsa_admin_rpc_run(a, &rpc, samsa_DescribeGroupsRequest_encode_any,
                              &req, samsa_DescribeGroupsResponse_decode_any,
                              &resp, deadline, scratch);
    if (err == SAMSA_ERR_NONE && resp.Groups_cnt != 1) {
        err = SAMSA_ERR__BAD_MSG;
    }
    if (err == SAMSA_ERR_NONE) {
        admin_group_desc(arena, gd, &resp.Groups[0], node);
    }
    return err;
}

/* Errors that belong to one group rather than to the whole call. */
static bool
admin_group_item_err(samsa_err_t err)
{
    return err > SAMSA_ERR_NONE;
}

samsa_err_t
samsa_admin_describe_groups(samsa_admin_t *a, const char *const *group_ids,
                            size_t n, int64_t timeout_ms,
                            samsa_group_descs_t **resultp)
{
    samsa_arena_t         scratch = SAMSA_ARENA_INIT, *arena;
    samsa_group_descs_t  *res;
    samsa_err_t           err = SAMSA_ERR_NONE, e;
    int64_t               deadline;
    size_t                i;

    *resultp = NULL;
    deadline = samsa_admin_deadline(a, timeout_ms);
    if (n == 0 || group_ids == NULL) {
        return SAMSA_ERR__INVALID_ARG;
    }
    res = samsa_admin_result_new(sizeof(*res), &arena);
    res->groups = samsa_arena_calloc(arena, n + 1, sizeof(*res->groups));
    res->n = n;
    pthread_mutex_lock(&a->lock);
    for (i = 0; i < n && err == SAMSA_ERR_NONE; i++) {
        e = admin_describe_group(a, group_ids[i], deadline, &scratch, arena,
                                 &res->groups[i]);
        if (admin_group_item_err(e)) {
            res->groups[i].err = e;
            res->groups[i].errmsg = samsa_err_text(e);
        } else {
            err = e;
        }
    }
    pthread_mutex_unlock(&a->lock);
    samsa_arena_fini(&scratch);
    if (err != SAMSA_ERR_NONE) {
        samsa_admin_result_free(res);
        return err;
    }
    *resultp = res;
    return SAMSA_ERR_NONE;
}

/* ---- DeleteGroups ------------------------------------------------------ */

/* Start a round trip to group_id's coordinator. */
static samsa_err_t
admin_group_rpc_begin(samsa_admin_t *a, const char *group_id, int16_t api,
                      int16_t lo, int16_t hi, int64_t deadline,
                      samsa_admin_rpc_t *rpc)
{
    samsa_err_t  err;
    int32_t      node = -1;

    err = samsa_admin_coordinator(a, group_id, deadline, &node);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    return samsa_admin_rpc_begin(a, rpc, node, api, lo, hi, deadline);
}

static samsa_err_t
admin_delete_group(samsa_admin_t *a, const char *group_id, int64_t deadline,
                   samsa_arena_t *scratch, samsa_err_t *group_err)
{
    samsa_DeleteGroupsRequest_t   req;
    samsa_DeleteGroupsResponse_t  resp;
    samsa_slice_t                 id = samsa_slice_cstr(group_id);
    samsa_admin_rpc_t             rpc;
    samsa_err_t                   err;

    err = admin_group_rpc_begin(a, group_id, SAMSA_API_DeleteGroups, 0, 2,
                                deadline, &rpc);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    samsa_DeleteGroupsRequest_init(&req);
    req.GroupsNames = &id;
    req.GroupsNames_cnt = 1;
    err = samsa_admin_rpc_run(a, &rpc, samsa_DeleteGroupsRequest_encode_any,
                              &req, samsa_DeleteGroupsResponse_decode_any,
                              &resp, deadline, scratch);
    if (err == SAMSA_ERR_NONE && resp.Results_cnt != 1) {
        err = SAMSA_ERR__BAD_MSG;
    }
    if (err == SAMSA_ERR_NONE) {
        *group_err = (samsa_err_t) resp.Results[0].ErrorCode;
    }
    return err;
}

samsa_err_t
samsa_admin_delete_groups(samsa_admin_t *a, const char *const *group_ids,
                          size_t n, int64_t timeout_ms,
                          samsa_admin_items_t **resultp)
{
    samsa_arena_t         scratch = SAMSA_ARENA_INIT, *arena;
    samsa_admin_items_t  *res;
    samsa_err_t           err = SAMSA_ERR_NONE, e, ge;
    int64_t               deadline;
    size_t                i;

    *resultp = NULL;
    deadline = samsa_admin_deadline(a, timeout_ms);
    if (n == 0 || group_ids == NULL) {
        return SAMSA_ERR__INVALID_ARG;
    }
    res = samsa_admin_result_new(sizeof(*res), &arena);
    res->items = samsa_arena_calloc(arena, n + 1, sizeof(*res->items));
    res->n = n;
    pthread_mutex_lock(&a->lock);
    for (i = 0; i < n && err == SAMSA_ERR_NONE; i++) {
        ge = SAMSA_ERR_NONE;
        e = admin_delete_group(a, group_ids[i], deadline, &scratch, &ge);
        if (admin_group_item_err(e)) {
            ge = e;
        } else {
            err = e;
        }
        res->items[i].name = samsa_arena_strndup(arena, group_ids[i],
                                                 strlen(group_ids[i]));
        res->items[i].err = ge;
        res->items[i].errmsg = samsa_admin_errmsg(arena, ge, SAMSA_SLICE_NULL);
    }
    pthread_mutex_unlock(&a->lock);
    samsa_arena_fini(&scratch);
    if (err != SAMSA_ERR_NONE) {
        samsa_admin_result_free(res);
        return err;
    }
    *resultp = res;
    return SAMSA_ERR_NONE;
}

/* ---- committed offsets ------------------------------------------------- */

/* Group the n tps (stride apart) by topic (stable: first appearance
 * order) into the request arrays layout describes; *order the tps indexes
 * in the order of the partition array. */
static samsa_admin_tp_arrays_t
admin_group_by_topic(samsa_arena_t *scratch, const void *tps, size_t n,
                     size_t stride, const samsa_admin_tp_layout_t *layout,
                     size_t **order)
{
    bool        *used = samsa_arena_calloc(scratch, n + 1, sizeof(bool));
    const char  *topic;
    size_t       i, j, k = 0;

    *order = samsa_arena_calloc(scratch, n + 1, sizeof(size_t));
    for (i = 0; i < n; i++) {
        if (used[i]) {
            continue;
        }
        topic = samsa_admin_tp_at(tps, stride, i)->topic;
        for (j = i; j < n; j++) {
            if (!used[j]
                && strcmp(topic, samsa_admin_tp_at(tps, stride, j)->topic)
                       == 0) {
                used[j] = true;
                (*order)[k++] = j;
            }
        }
    }
    return samsa_admin_tp_request(scratch, tps, stride, *order, n, layout);
}


static samsa_tp_results_t *
admin_group_results_new(size_t n, samsa_arena_t **arenap)
{
    samsa_tp_results_t  *res = samsa_admin_result_new(sizeof(*res), arenap);

    res->items = samsa_arena_calloc(*arenap, n + 1, sizeof(*res->items));
    return res;
}

static samsa_tp_result_t *
admin_group_result_add(samsa_arena_t *arena, samsa_tp_results_t *res,
                       samsa_slice_t topic, int32_t partition, int16_t code)
{
    samsa_tp_result_t  *it = &res->items[res->n++];

    it->topic = samsa_admin_name(arena, topic);
    it->partition = partition;
    it->err = (samsa_err_t) code;
    it->errmsg = samsa_admin_errmsg(arena, it->err, SAMSA_SLICE_NULL);
    it->offset = -1;
    it->timestamp = -1;
    it->leader_epoch = -1;
    return it;
}

/* OffsetFetch's topics hold bare partition indexes. */
static const samsa_admin_tp_layout_t  admin_offset_fetch_layout = {
    sizeof(samsa_OffsetFetchRequestTopic_t),
    samsa_OffsetFetchRequestTopic_init_any,
    offsetof(samsa_OffsetFetchRequestTopic_t, Name),
    offsetof(samsa_OffsetFetchRequestTopic_t, PartitionIndexes),
    offsetof(samsa_OffsetFetchRequestTopic_t, PartitionIndexes_cnt),
    sizeof(int32_t), NULL, 0,
};

static samsa_err_t
admin_offset_fetch(samsa_admin_t *a, const char *group_id,
                   const samsa_topic_partition_t *tps, size_t n,
                   int64_t deadline, samsa_arena_t *scratch,
                   samsa_tp_results_t **resultp)
{
    samsa_OffsetFetchRequest_t        req;
    samsa_OffsetFetchResponse_t       resp;
    samsa_admin_tp_arrays_t           arr;
    samsa_tp_results_t               *res;
    samsa_tp_result_t                *it;
    samsa_arena_t                    *arena;
    samsa_admin_rpc_t                 rpc;
    samsa_err_t                       err;
    size_t                           *order, total = 0;
    int32_t                           j, k;

    /* v2+: null topics = all; v7 max keeps the single-group shape */
    err = admin_group_rpc_begin(a, group_id, SAMSA_API_OffsetFetch,
                                n == 0 ? 2 : 1, 7, deadline, &rpc);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    samsa_OffsetFetchRequest_init(&req);
    req.GroupId = samsa_slice_cstr(group_id);
    req.Topics_cnt = -1;
    if (n > 0) {
        arr = admin_group_by_topic(scratch, tps, n, sizeof(*tps),
                                   &admin_offset_fetch_layout, &order);
        req.Topics = arr.topics;
        req.Topics_cnt = arr.ntopics;
    }
    err = samsa_admin_rpc_run(a, &rpc, samsa_OffsetFetchRequest_encode_any,
                              &req, samsa_OffsetFetchResponse_decode_any, &resp,
                              deadline, scratch);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    for (j = 0; j < resp.Topics_cnt; j++) {
        total += (size_t) resp.Topics[j].Partitions_cnt;
    }
    res = admin_group_results_new(total, &arena);
    res->err = (samsa_err_t) resp.ErrorCode;
    for (j = 0; j < resp.Topics_cnt; j++) {
        for (k = 0; k < resp.Topics[j].Partitions_cnt; k++) {
            const samsa_OffsetFetchResponsePartition_t  *p =
                &resp.Topics[j].Partitions[k];

            it = admin_group_result_add(arena, res, resp.Topics[j].Name,
                                        p->PartitionIndex, p->ErrorCode);
            it->offset = p->CommittedOffset;
            it->leader_epoch = p->CommittedLeaderEpoch;
            it->metadata = samsa_admin_str(arena, p->Metadata);
        }
    }
    qsort(res->items, res->n, sizeof(*res->items), samsa_admin_cmp_tp_result);
    *resultp = res;
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_admin_list_group_offsets(samsa_admin_t *a, const char *group_id,
                               const samsa_topic_partition_t *tps, size_t n,
                               int64_t timeout_ms,
                               samsa_tp_results_t **resultp)
{
    samsa_arena_t  scratch = SAMSA_ARENA_INIT;
    samsa_err_t    err;
    size_t         i;

    *resultp = NULL;
    if (group_id == NULL || (n > 0 && tps == NULL)) {
        return SAMSA_ERR__INVALID_ARG;
    }
    for (i = 0; i < n; i++) {
        if (tps[i].topic == NULL) {
            return SAMSA_ERR__INVALID_ARG;
        }
    }
    pthread_mutex_lock(&a->lock);
    err = admin_offset_fetch(a, group_id, tps, n,
                             samsa_admin_deadline(a, timeout_ms), &scratch,
                             resultp);
    pthread_mutex_unlock(&a->lock);
    samsa_arena_fini(&scratch);
    return err;
}

/* Is the group inactive (Empty, or unknown: Dead)?  *state gets its state
 * (static text or scratch memory). */
static samsa_err_t
admin_group_inactive(samsa_admin_t *a, const char *group_id,
                     int64_t deadline, samsa_arena_t *scratch,
                     const char **state)
{
    samsa_group_desc_t  gd;
    samsa_err_t         err;

    memset(&gd, 0, sizeof(gd));
    err = admin_describe_group(a, group_id, deadline, scratch, scratch, &gd);
    *state = gd.state;
    if (err == SAMSA_ERR_NONE && gd.err != SAMSA_ERR_NONE
        && gd.err != SAMSA_ERR_GROUP_ID_NOT_FOUND) {
        err = gd.err;
    }
    if (err == SAMSA_ERR_NONE && strcmp(gd.state, "Empty") != 0
        && strcmp(gd.state, "Dead") != 0) {
        err = SAMSA_ERR_NON_EMPTY_GROUP;
    }
    return err;
}

static const samsa_admin_tp_layout_t  admin_offset_commit_layout =
    SAMSA_ADMIN_TP_LAYOUT(OffsetCommitRequestTopic,
                          OffsetCommitRequestPartition);

static samsa_err_t
admin_offset_commit(samsa_admin_t *a, const char *group_id,
                    const samsa_tp_spec_t *tps, size_t n, int64_t deadline,
                    samsa_arena_t *scratch, samsa_arena_t *arena,
                    samsa_tp_results_t *res)
{
    samsa_OffsetCommitRequest_t            req;
    samsa_OffsetCommitResponse_t           resp;
    samsa_OffsetCommitRequestPartition_t  *rp;
    samsa_admin_tp_arrays_t                arr;
    samsa_admin_rpc_t                      rpc;
    samsa_err_t                            err;
    size_t                                *order, i;
    int32_t                                j, k;

    err = admin_group_rpc_begin(a, group_id, SAMSA_API_OffsetCommit, 2, 9,
                                deadline, &rpc);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    arr = admin_group_by_topic(scratch, tps, n, sizeof(*tps),
                               &admin_offset_commit_layout, &order);
    rp = arr.parts;
    for (i = 0; i < n; i++) {
        rp[i].CommittedOffset = tps[order[i]].value;
        rp[i].CommittedMetadata = samsa_slice_cstr("");
    }
    samsa_OffsetCommitRequest_init(&req);
    req.GroupId = samsa_slice_cstr(group_id);
    req.GenerationIdOrMemberEpoch = -1;             /* admin commit */
    req.MemberId = samsa_slice_cstr("");
    req.Topics = arr.topics;
    req.Topics_cnt = arr.ntopics;
    err = samsa_admin_rpc_run(a, &rpc, samsa_OffsetCommitRequest_encode_any,
                              &req, samsa_OffsetCommitResponse_decode_any,
                              &resp, deadline, scratch);
    for (j = 0; err == SAMSA_ERR_NONE && j < resp.Topics_cnt; j++) {
        for (k = 0; k < resp.Topics[j].Partitions_cnt && res->n < n; k++) {
            const samsa_OffsetCommitResponsePartition_t  *p =
                &resp.Topics[j].Partitions[k];
            samsa_tp_result_t                            *it;

            it = admin_group_result_add(arena, res, resp.Topics[j].Name,
                                        p->PartitionIndex, p->ErrorCode);
            if (it->err == SAMSA_ERR_NONE) {
                it->offset = tps[0].value;
                for (i = 0; i < n; i++) {
                    if (tps[i].partition == it->partition
                        && strcmp(tps[i].topic, it->topic) == 0) {
                        it->offset = tps[i].value;
                    }
                }
            }
        }
    }
    return err;
}

samsa_err_t
samsa_admin_alter_group_offsets(samsa_admin_t *a, const char *group_id,
                                const samsa_tp_spec_t *tps, size_t n,
                                int64_t timeout_ms,
                                samsa_tp_results_t **resultp)
{
    samsa_arena_t        scratch = SAMSA_ARENA_INIT, *arena;
    samsa_tp_results_t  *res;
    samsa_err_t          err;
    int64_t              deadline;
    const char          *state = NULL;

    *resultp = NULL;
    deadline = samsa_admin_deadline(a, timeout_ms);
    if (group_id == NULL || !samsa_admin_tps_valid(tps, n, sizeof(*tps))) {
        return SAMSA_ERR__INVALID_ARG;
    }
    res = admin_group_results_new(n, &arena);
    pthread_mutex_lock(&a->lock);
    err = admin_group_inactive(a, group_id, deadline, &scratch, &state);
    if (err == SAMSA_ERR_NONE) {
        err = admin_offset_commit(a, group_id, tps, n, deadline, &scratch,
                                  arena, res);
    }
    pthread_mutex_unlock(&a->lock);
    samsa_arena_fini(&scratch);
    return samsa_admin_tp_results_done(res, err, resultp);
}

static const samsa_admin_tp_layout_t  admin_offset_delete_layout =
    SAMSA_ADMIN_TP_LAYOUT(OffsetDeleteRequestTopic,
                          OffsetDeleteRequestPartition);

static samsa_err_t
admin_offset_delete(samsa_admin_t *a, const char *group_id,
                    const samsa_topic_partition_t *tps, size_t n,
                    int64_t deadline, samsa_arena_t *scratch,
                    samsa_arena_t *arena, samsa_tp_results_t *res)
{
    samsa_OffsetDeleteRequest_t            req;
    samsa_OffsetDeleteResponse_t           resp;
    samsa_admin_tp_arrays_t                arr;
    samsa_admin_rpc_t                      rpc;
    samsa_err_t                            err;
    size_t                                *order;
    int32_t                                j, k;

    err = admin_group_rpc_begin(a, group_id, SAMSA_API_OffsetDelete, 0, 0,
                                deadline, &rpc);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    arr = admin_group_by_topic(scratch, tps, n, sizeof(*tps),
                               &admin_offset_delete_layout, &order);
    samsa_OffsetDeleteRequest_init(&req);
    req.GroupId = samsa_slice_cstr(group_id);
    req.Topics = arr.topics;
    req.Topics_cnt = arr.ntopics;
    err = samsa_admin_rpc_run(a, &rpc, samsa_OffsetDeleteRequest_encode_any,
                              &req, samsa_OffsetDeleteResponse_decode_any,
                              &resp, deadline, scratch);
    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    res->err = (samsa_err_t) resp.ErrorCode;
    for (j = 0; j < resp.Topics_cnt; j++) {
        for (k = 0; k < resp.Topics[j].Partitions_cnt && res->n < n; k++) {
            (void) admin_group_result_add(
                arena, res, resp.Topics[j].Name,
                resp.Topics[j].Partitions[k].PartitionIndex,
                resp.Topics[j].Partitions[k].ErrorCode);
        }
    }
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_admin_delete_group_offsets(samsa_admin_t *a, const char *group_id,
                                 const samsa_topic_partition_t *tps, size_t n,
                                 int64_t timeout_ms,
                                 samsa_tp_results_t **resultp)
{
    samsa_arena_t        scratch = SAMSA_ARENA_INIT, *arena;
    samsa_tp_results_t  *res;
    samsa_err_t          err;

    *resultp = NULL;
    if (group_id == NULL || !samsa_admin_tps_valid(tps, n, sizeof(*tps))) {
        return SAMSA_ERR__INVALID_ARG;
    }
    res = admin_group_results_new(n, &arena);
    pthread_mutex_lock(&a->lock);
    err = admin_offset_delete(a, group_id, tps, n,
                              samsa_admin_deadline(a, timeout_ms), &scratch,
                              arena, res);
    pthread_mutex_unlock(&a->lock);
    samsa_arena_fini(&scratch);
    return samsa_admin_tp_results_done(res, err, resultp);
}
