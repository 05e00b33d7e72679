/*
 * client/consumer/coordinator.c - the consumer's side of the classic group protocol
 * (Java's ConsumerCoordinator + AbstractCoordinator): FindCoordinator,
 * JoinGroup (KIP-394 member-id-required retry, static membership), the
 * leader's assignment (assignor.c) and SyncGroup, heartbeats, LeaveGroup,
 * eager and cooperative (KIP-429) rebalances, commits (OffsetCommit) and
 * committed offsets (OffsetFetch), auto-commit, max.poll.interval.ms.
 * The coordinator gets its own connection (node id INT32_MAX - broker id,
 * as Java), so heartbeats never queue behind a long-polling Fetch.
 * Rebalance callbacks are events run by the app in poll(): an eager
 * member queues REVOKE (all) and waits (WAIT_APP) before it joins; a
 * cooperative member revokes only what the new assignment moved away,
 * then rejoins.
 * Threads: the background thread, c->lock held (callbacks take it).
 */
#include <stdio.h>
#include <string.h>

#include "client/consumer/assignor.h"
#include "client/consumer/consumer_int.h"
#include "proto/gen/FindCoordinator.h"
#include "proto/gen/Heartbeat.h"
#include "proto/gen/JoinGroup.h"
#include "proto/gen/LeaveGroup.h"
#include "proto/gen/OffsetCommit.h"
#include "proto/gen/OffsetFetch.h"
#include "proto/gen/SyncGroup.h"
#include "proto/gen/apis.h"
#include "util/alloc.h"
#include "util/arena.h"
#include "util/diag.h"
#include "util/time.h"

#define COORDINATOR_IDLE_MS  100

/* in consumer.c */
void samsa_consumer_parts_add(samsa_consumer_t *c,
                              const samsa_topic_partition_t *tps, size_t n);

/* ---- helpers ------------------------------------------------------------ */

static void
coordinator_members_free(samsa_coordinator_t *g)
{
    int32_t  i;

    for (i = 0; i < g->nmembers; i++) {
        samsa_free(g->members[i].member_id);
        samsa_free(g->members[i].instance_id);
        samsa_cproto_sub_fini(&g->members[i].sub);
    }
    samsa_free(g->members);
    g->members = NULL;
    g->nmembers = 0;
}

static void
coordinator_joined_free(samsa_coordinator_t *g)
{
    int32_t  i;

    for (i = 0; i < g->njoined_topics; i++) {
        samsa_free(g->joined_topics[i]);
    }
    samsa_free(g->joined_topics);
    samsa_free(g->joined_nparts);
    g->joined_topics = NULL;
    g->joined_nparts = NULL;
    g->njoined_topics = 0;
}

void
samsa_coordinator_fini(samsa_coordinator_t *g)
{
    coordinator_members_free(g);
    coordinator_joined_free(g);
    samsa_membership_fini(&g->k848);
    samsa_membership_tps_free(g->k848_added, g->nk848_added);
    if (g->k848_leave_op != NULL) {
        samsa_consumer_op_free(g->k848_leave_op);
    }
    samsa_free(g->member_id);
    samsa_free(g->protocol);
    samsa_free(g->leader_id);
    memset(g, 0, sizeof(*g));
}

static void
coordinator_set_str(char **dst, samsa_slice_t s)
{
    samsa_free(*dst);
    *dst = s.ptr != NULL ? samsa_strndup(s.ptr, s.len) : samsa_strdup("");
}

static bool
coordinator_subscribed(const samsa_consumer_t *c)
{
    return c->sub_mode == SAMSA_CSUB_TOPICS
           || c->sub_mode == SAMSA_CSUB_PATTERN;
}

static bool
coordinator_coord_err(samsa_err_t err)
{
    return err == SAMSA_ERR_NOT_COORDINATOR
           || err == SAMSA_ERR_COORDINATOR_NOT_AVAILABLE
           || err == SAMSA_ERR_COORDINATOR_LOAD_IN_PROGRESS
           || err < SAMSA_ERR_UNKNOWN_SERVER_ERROR;     /* local: network */
}

/* The coordinator is gone: find it again (after a backoff). */
static void
coordinator_coord_dead(samsa_consumer_t *c, samsa_err_t err)
{
    samsa_coordinator_t  *g = &c->grp;

    if (g->coord_id >= 0) {
        samsa_debug("consumer: group coordinator %d lost: %s", g->coord_id,
                    samsa_err_name(err));
    }
    g->coord_id = -1;
    g->coord_retry_ms = samsa_now_ms() + c->cc.net.retry_backoff_ms;
}

/* Every assigned partition, copied.  @locks c->lock */
static samsa_topic_partition_t *
coordinator_owned(samsa_consumer_t *c, size_t *n)
{
    samsa_topic_partition_t  *tps;
    int32_t                   i;

    tps = samsa_calloc((size_t) c->nparts + 1, sizeof(*tps));
    for (i = 0; i < c->nparts; i++) {
        tps[i].topic = samsa_strdup(c->parts[i]->topic);
        tps[i].partition = c->parts[i]->partition;
        tps[i].offset = SAMSA_OFFSET_INVALID;
    }
    *n = (size_t) c->nparts;
    return tps;
}

static void
coordinator_push(samsa_consumer_t *c, samsa_cevent_kind_t kind,
            samsa_topic_partition_t *tps, size_t n, bool rejoin)
{
    samsa_cevent_t  *ev = samsa_calloc(1, sizeof(*ev));

    ev->kind = kind;
    ev->tps = tps;
    ev->n = n;
    ev->rejoin = rejoin;
    ev->generation = c->grp.generation;
    samsa_consumer_event_push(c, ev);
}

/* The member lost its membership (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION,
 * poll timeout): its partitions are lost; join again once the app ran
 * the LOST callback. */
static void
coordinator_lose(samsa_consumer_t *c, bool reset_member)
{
    samsa_coordinator_t           *g = &c->grp;
    samsa_topic_partition_t  *tps;
    size_t                    n;

    if (reset_member) {
        coordinator_set_str(&g->member_id, samsa_slice_cstr(""));
    }
    g->generation = -1;
    if (!coordinator_subscribed(c)) {
        g->state = SAMSA_COORDINATOR_IDLE;
        return;
    }
    if (c->nparts > 0) {
        tps = coordinator_owned(c, &n);
        coordinator_push(c, SAMSA_CEVENT_LOST, tps, n, true);
        g->state = SAMSA_COORDINATOR_WAIT_APP;
    } else {
        g->state = SAMSA_COORDINATOR_NEED_JOIN;
    }
}

static void
coordinator_fatal(samsa_consumer_t *c, samsa_err_t err, const char *what)
{
    samsa_error("consumer: %s failed: %s (%s)", what, samsa_err_name(err),
                samsa_err_text(err));
    c->grp.fatal = err;
    c->grp.state = SAMSA_COORDINATOR_IDLE;
    pthread_cond_broadcast(&c->cond);
}

/* Send a frame to the coordinator; false if it could not go. */
static bool
coordinator_send(samsa_consumer_t *c, samsa_buf_t *frame, int16_t api, int16_t v,
            samsa_nc_resp_fn *cb, void *opaque, int64_t now)
{
    if (samsa_netclient_send(c->nc, c->grp.coord_node, frame, api, v, true,
                             cb, c, opaque, now) != SAMSA_ERR_NONE) {
        samsa_buf_fini(frame);
        return false;
    }
    return true;
}

/* The static member's group.instance.id, or null (a dynamic member). */
static samsa_slice_t
coordinator_instance_id(const samsa_consumer_t *c)
{
    return c->cc.group_instance_id != NULL
               ? samsa_slice_cstr(c->cc.group_instance_id)
               : SAMSA_SLICE_NULL;
}

/* A JoinGroup or SyncGroup (what) failed with err, the state already back
 * at NEED_JOIN: a stale member loses its partitions, a fenced or
 * unauthorized one stops, a rebalance joins again at once, anything else
 * after a backoff. */
static void
coordinator_rejoin_err(samsa_consumer_t *c, samsa_err_t err, const char *what)
{
    switch (err) {
    case SAMSA_ERR_UNKNOWN_MEMBER_ID:
    case SAMSA_ERR_ILLEGAL_GENERATION:
        coordinator_lose(c, true);
        break;
    case SAMSA_ERR_REBALANCE_IN_PROGRESS:
        break;
    case SAMSA_ERR_FENCED_INSTANCE_ID:
    case SAMSA_ERR_GROUP_AUTHORIZATION_FAILED:
        coordinator_fatal(c, err, what);
        break;
    default:
        if (coordinator_coord_err(err)) {
            coordinator_coord_dead(c, err);
        }
        c->grp.join_retry_ms = samsa_now_ms() + c->cc.net.retry_backoff_ms;
        break;
    }
}

static int16_t
coordinator_version(samsa_consumer_t *c, int16_t api, int16_t lo, int16_t hi)
{
    return samsa_netclient_version(c->nc, c->grp.coord_node, api, lo, hi);
}

bool
samsa_coordinator_send(samsa_consumer_t *c, samsa_buf_t *frame, int16_t api,
                  int16_t v, samsa_nc_resp_fn *cb, void *opaque, int64_t now)
{
    return coordinator_send(c, frame, api, v, cb, opaque, now);
}

int16_t
samsa_coordinator_version(samsa_consumer_t *c, int16_t api, int16_t lo,
                     int16_t hi)
{
    return coordinator_version(c, api, lo, hi);
}

void
samsa_coordinator_coord_dead(samsa_consumer_t *c, samsa_err_t err)
{
    coordinator_coord_dead(c, err);
}

void
samsa_coordinator_fatal(samsa_consumer_t *c, samsa_err_t err, const char *what)
{
    coordinator_fatal(c, err, what);
}

bool
samsa_coordinator_poll_overdue(samsa_consumer_t *c, int64_t now)
{
    if (now - c->last_poll_ms <= c->cc.max_poll_interval_ms) {
        return false;
    }
    samsa_warn("consumer: no poll() for more than max.poll.interval.ms "
               "(%d ms): leaving group %s", c->cc.max_poll_interval_ms,
               c->cc.group_id);
    return true;
}

void
samsa_coordinator_push(samsa_consumer_t *c, samsa_cevent_kind_t kind,
                  samsa_topic_partition_t *tps, size_t n, bool rejoin)
{
    coordinator_push(c, kind, tps, n, rejoin);
}

/* ---- FindCoordinator ---------------------------------------------------- */

static void
coordinator_on_find(void *ctx, int32_t node, samsa_err_t err, samsa_rd_t *body,
               void *opaque)
{
    samsa_consumer_t                 *c = ctx;
    samsa_coordinator_t                   *g = &c->grp;
    samsa_FindCoordinatorResponse_t   resp;
    samsa_arena_t                     arena = SAMSA_ARENA_INIT;
    char                              host[256];

    (void) node;
    pthread_mutex_lock(&c->lock);
    g->coord_inflight = false;
    if (err == SAMSA_ERR_NONE) {
        err = samsa_FindCoordinatorResponse_decode(
            body, (int16_t) (intptr_t) opaque, &arena, &resp);
    }
    if (err == SAMSA_ERR_NONE) {
        err = (samsa_err_t) resp.ErrorCode;
    }
    if (err == SAMSA_ERR_NONE && resp.NodeId >= 0) {
        snprintf(host, sizeof(host), "%.*s", (int) resp.Host.len,
                 resp.Host.ptr);
        g->coord_id = resp.NodeId;
        g->coord_node = INT32_MAX - resp.NodeId;
        samsa_netclient_node_set(c->nc, g->coord_node, host, resp.Port);
        samsa_netclient_wakeup(c->nc);
    } else {
        if (err == SAMSA_ERR_GROUP_AUTHORIZATION_FAILED
            || err == SAMSA_ERR_INVALID_GROUP_ID) {
            coordinator_fatal(c, err, "FindCoordinator");
        }
        coordinator_coord_dead(c, err);
    }
    samsa_arena_fini(&arena);
    pthread_mutex_unlock(&c->lock);
}

static void
coordinator_find(samsa_consumer_t *c, int64_t now)
{
    samsa_coordinator_t                  *g = &c->grp;
    samsa_FindCoordinatorRequest_t   req;
    samsa_buf_t                      frame = SAMSA_BUF_INIT;
    samsa_wr_t                       wr;
    int32_t                          node;
    int16_t                          v;

    if (g->coord_inflight || now < g->coord_retry_ms) {
        return;
    }
    node = samsa_netclient_least_loaded(c->nc, now);
    if (node == SAMSA_NC_NO_NODE || !samsa_netclient_ready(c->nc, node, now)
        || (v = samsa_netclient_version(c->nc, node,
                                        SAMSA_API_FindCoordinator, 0, 3))
               < 0) {
        return;
    }
    samsa_FindCoordinatorRequest_init(&req);
    req.Key = samsa_slice_cstr(c->cc.group_id);
    req.KeyType = 0;
    samsa_netclient_frame_begin(c->nc, SAMSA_API_FindCoordinator, v, &frame,
                                &wr);
    samsa_FindCoordinatorRequest_encode(&wr, v, &req);
    if (samsa_netclient_send(c->nc, node, &frame, SAMSA_API_FindCoordinator,
                             v, true, coordinator_on_find, c,
                             (void *) (intptr_t) v, now) == SAMSA_ERR_NONE) {
        g->coord_inflight = true;
    } else {
        samsa_buf_fini(&frame);
    }
}

/* ---- JoinGroup ---------------------------------------------------------- */

/* This member's subscription for JoinGroup.  @locks c->lock */
static void
coordinator_subscription(samsa_consumer_t *c, samsa_buf_t *out)
{
    samsa_cproto_sub_t    sub;
    samsa_cproto_topic_t *owned;
    const char          **topics;
    int32_t               n, i, j, k;

    memset(&sub, 0, sizeof(sub));
    topics = samsa_consumer_sub_topics(c, &n);
    sub.version = SAMSA_CPROTO_VERSION_MAX;
    sub.topics = (char **) topics;
    sub.ntopics = n;
    sub.generation = c->grp.generation;
    sub.rack = c->cc.client_rack[0] != '\0' ? c->cc.client_rack : NULL;
    owned = samsa_calloc((size_t) c->nparts + 1, sizeof(*owned));
    for (i = 0; i < c->nparts; i++) {
        for (j = 0; j < sub.nowned; j++) {
            if (strcmp(owned[j].topic, c->parts[i]->topic) == 0) {
                break;
            }
        }
        if (j == sub.nowned) {
            owned[j].topic = c->parts[i]->topic;
            owned[j].parts = samsa_calloc((size_t) c->nparts + 1,
                                          sizeof(int32_t));
            sub.nowned++;
        }
        owned[j].parts[owned[j].nparts++] = c->parts[i]->partition;
    }
    sub.owned = owned;
    samsa_cproto_sub_encode(&sub, out);
    for (k = 0; k < sub.nowned; k++) {
        samsa_free(owned[k].parts);
    }
    samsa_free(owned);
    samsa_free(topics);
}

/* Own topics and their partition counts now (to notice changes). */
static void
coordinator_snapshot(samsa_consumer_t *c)
{
    samsa_coordinator_t     *g = &c->grp;
    const samsa_mdtopic_t   *t;
    const char             **topics;
    int32_t                  n, i;

    coordinator_joined_free(g);
    topics = samsa_consumer_sub_topics(c, &n);
    g->joined_topics = samsa_calloc((size_t) n + 1, sizeof(char *));
    g->joined_nparts = samsa_calloc((size_t) n + 1, sizeof(int32_t));
    for (i = 0; i < n; i++) {
        g->joined_topics[i] = samsa_strdup(topics[i]);
        t = samsa_consumer_md_find(c, topics[i], strlen(topics[i]));
        g->joined_nparts[i] = t != NULL && t->err == SAMSA_ERR_NONE
                                  ? t->npartitions : 0;
    }
    g->njoined_topics = n;
    samsa_free(topics);
}

void
samsa_coordinator_md_changed(samsa_consumer_t *c)
{
    if (c->grp.mship != NULL) {
        c->grp.mship->md_changed(c);
    }
}

/* Classic: rejoin when this member's topics or their partition counts
 * changed since it joined. */
static void
coordinator_classic_md_changed(samsa_consumer_t *c)
{
    samsa_coordinator_t     *g = &c->grp;
    const samsa_mdtopic_t   *t;
    const char             **topics;
    int32_t                  n, i, j, np;
    bool                changed;

    if (!coordinator_subscribed(c) || g->state != SAMSA_COORDINATOR_STABLE) {
        return;
    }
    topics = samsa_consumer_sub_topics(c, &n);
    changed = n != g->njoined_topics;
    for (i = 0; i < n && !changed; i++) {
        for (j = 0; j < g->njoined_topics; j++) {
            if (strcmp(g->joined_topics[j], topics[i]) == 0) {
                break;
            }
        }
        t = samsa_consumer_md_find(c, topics[i], strlen(topics[i]));
        np = t != NULL && t->err == SAMSA_ERR_NONE ? t->npartitions : 0;
        changed = j == g->njoined_topics || g->joined_nparts[j] != np;
    }
    samsa_free(topics);
    if (changed) {
        samsa_info("consumer: subscribed topics or their partitions "
                   "changed: rejoining group %s", c->cc.group_id);
        g->state = SAMSA_COORDINATOR_NEED_JOIN;
    }
}

static void
coordinator_on_join(void *ctx, int32_t node, samsa_err_t err, samsa_rd_t *body,
               void *opaque)
{
    samsa_consumer_t           *c = ctx;
    samsa_coordinator_t             *g = &c->grp;
    samsa_JoinGroupResponse_t   resp;
    samsa_arena_t               arena = SAMSA_ARENA_INIT;
    int32_t                     i;

    (void) node;
    pthread_mutex_lock(&c->lock);
    if (g->state != SAMSA_COORDINATOR_JOINING) {
        goto out;
    }
    g->state = SAMSA_COORDINATOR_NEED_JOIN;
    if (err == SAMSA_ERR_NONE) {
        err = samsa_JoinGroupResponse_decode(body, (int16_t) (intptr_t) opaque,
                                             &arena, &resp);
    }
    if (err == SAMSA_ERR_NONE) {
        err = (samsa_err_t) resp.ErrorCode;
    }
    switch (err) {
    case SAMSA_ERR_NONE:
        break;
    case SAMSA_ERR_MEMBER_ID_REQUIRED:         /* KIP-394: join again */
        coordinator_set_str(&g->member_id, resp.MemberId);
        goto out;
    case SAMSA_ERR_INVALID_SESSION_TIMEOUT:
    case SAMSA_ERR_INCONSISTENT_GROUP_PROTOCOL:
    case SAMSA_ERR_GROUP_MAX_SIZE_REACHED:
    case SAMSA_ERR_INVALID_GROUP_ID:
        coordinator_fatal(c, err, "JoinGroup");
        goto out;
    default:
        coordinator_rejoin_err(c, err, "JoinGroup");
        goto out;
    }
    g->generation = resp.GenerationId;
    coordinator_set_str(&g->member_id, resp.MemberId);
    coordinator_set_str(&g->protocol, resp.ProtocolName);
    coordinator_set_str(&g->leader_id, resp.Leader);
    g->cooperative = samsa_assignor_cooperative(g->protocol);
    coordinator_members_free(g);
    if (strcmp(g->leader_id, g->member_id) == 0) {
        g->members = samsa_calloc((size_t) resp.Members_cnt + 1,
                                  sizeof(*g->members));
        for (i = 0; i < resp.Members_cnt; i++) {
            samsa_cmember_t  *m = &g->members[g->nmembers];
            const samsa_JoinGroupResponseMember_t  *rm = &resp.Members[i];

            if (samsa_cproto_sub_decode((const uint8_t *) rm->Metadata.ptr,
                                        rm->Metadata.len, &m->sub)
                != SAMSA_ERR_NONE) {
                samsa_warn("consumer: member %.*s sent a subscription that "
                           "does not parse: left out of the assignment",
                           (int) rm->MemberId.len, rm->MemberId.ptr);
                continue;
            }
            m->member_id = samsa_strndup(rm->MemberId.ptr, rm->MemberId.len);
            m->instance_id = rm->GroupInstanceId.ptr != NULL
                                 ? samsa_strndup(rm->GroupInstanceId.ptr,
                                                 rm->GroupInstanceId.len)
                                 : NULL;
            g->nmembers++;
        }
        samsa_consumer_md_request(c);   /* fresh partition counts */
        c->md_last_ms = INT64_MIN / 2;
    }
    g->state = SAMSA_COORDINATOR_AWAIT_MD;
    g->hb_last_ok_ms = samsa_now_ms();
out:
    samsa_arena_fini(&arena);
    pthread_mutex_unlock(&c->lock);
}

static void
coordinator_join(samsa_consumer_t *c, int64_t now)
{
    samsa_coordinator_t                    *g = &c->grp;
    samsa_JoinGroupRequest_t           req;
    samsa_JoinGroupRequestProtocol_t  *protos;
    samsa_buf_t                        frame = SAMSA_BUF_INIT, meta;
    samsa_wr_t                         wr;
    int32_t                            i;
    int16_t                            v;

    if (now < g->join_retry_ms
        || (v = coordinator_version(c, SAMSA_API_JoinGroup, 0, 8)) < 0) {
        return;
    }
    if (samsa_mdcache_gen(c->mdc) == 0) {
        samsa_consumer_md_request(c);   /* know the topics first */
        return;
    }
    samsa_buf_init(&meta, 256);
    coordinator_subscription(c, &meta);
    protos = samsa_calloc((size_t) c->cc.nassignors + 1, sizeof(*protos));
    for (i = 0; i < c->cc.nassignors; i++) {
        samsa_JoinGroupRequestProtocol_init(&protos[i]);
        protos[i].Name = samsa_slice_cstr(c->cc.assignors[i]);
        protos[i].Metadata = (samsa_slice_t) { (const char *) meta.data,
                                               meta.len };
    }
    samsa_JoinGroupRequest_init(&req);
    req.GroupId = samsa_slice_cstr(c->cc.group_id);
    req.SessionTimeoutMs = c->cc.session_timeout_ms;
    req.RebalanceTimeoutMs = c->cc.max_poll_interval_ms;
    req.MemberId = samsa_slice_cstr(g->member_id);
    req.GroupInstanceId = coordinator_instance_id(c);
    req.ProtocolType = samsa_slice_cstr("consumer");
    req.Protocols = protos;
    req.Protocols_cnt = c->cc.nassignors;
    samsa_netclient_frame_begin(c->nc, SAMSA_API_JoinGroup, v, &frame, &wr);
    samsa_JoinGroupRequest_encode(&wr, v, &req);
    samsa_free(protos);
    samsa_buf_fini(&meta);
    if (g->join_start_ns == 0) {
        g->join_start_ns = samsa_now_ns();
    }
    if (coordinator_send(c, &frame, SAMSA_API_JoinGroup, v, coordinator_on_join,
                    (void *) (intptr_t) v, now)) {
        g->state = SAMSA_COORDINATOR_JOINING;
    }
}

/* ---- SyncGroup ---------------------------------------------------------- */

/* Apply this member's assignment.  @locks c->lock */
static void
coordinator_apply(samsa_consumer_t *c, const samsa_cproto_asg_t *asg)
{
    samsa_coordinator_t           *g = &c->grp;
    samsa_topic_partition_t  *added, *revoked;
    size_t                    nadded = 0, nrevoked = 0, total = 0;
    int32_t                   i, j;

    for (i = 0; i < asg->ntopics; i++) {
        total += (size_t) asg->topics[i].nparts;
    }
    added = samsa_calloc(total + 1, sizeof(*added));
    revoked = samsa_calloc((size_t) c->nparts + 1, sizeof(*revoked));
    for (i = 0; i < asg->ntopics; i++) {
        for (j = 0; j < asg->topics[i].nparts; j++) {
            const char  *t = asg->topics[i].topic;
            int32_t      p = asg->topics[i].parts[j];

            if (p >= 0 && samsa_consumer_part_find(c, t, strlen(t), p)
                              == NULL) {
                added[nadded].topic = samsa_strdup(t);
                added[nadded].partition = p;
                added[nadded].offset = SAMSA_OFFSET_INVALID;
                nadded++;
            }
        }
    }
    for (i = 0; i < c->nparts; i++) {
        bool  keep = false;
        int32_t  k;

        for (j = 0; j < asg->ntopics && !keep; j++) {
            if (strcmp(asg->topics[j].topic, c->parts[i]->topic) != 0) {
                continue;
            }
            for (k = 0; k < asg->topics[j].nparts && !keep; k++) {
                keep = asg->topics[j].parts[k] == c->parts[i]->partition;
            }
        }
        if (!keep) {
            revoked[nrevoked].topic = samsa_strdup(c->parts[i]->topic);
            revoked[nrevoked].partition = c->parts[i]->partition;
            revoked[nrevoked].offset = SAMSA_OFFSET_INVALID;
            nrevoked++;
        }
    }
    samsa_consumer_parts_add(c, added, nadded);
    coordinator_push(c, SAMSA_CEVENT_ASSIGN, added, nadded, false);
    atomic_fetch_add_explicit(&c->m_rebalances, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->m_rebalance_ns,
                              samsa_now_ns() - g->join_start_ns,
                              memory_order_relaxed);
    g->join_start_ns = 0;
    g->state = SAMSA_COORDINATOR_STABLE;
    g->hb_next_ms = samsa_now_ms() + c->cc.heartbeat_interval_ms;
    g->hb_last_ok_ms = samsa_now_ms();
    coordinator_snapshot(c);
    samsa_info("consumer: joined group %s generation %d as %s (%s): %zu "
               "partition(s) added, %zu revoked", c->cc.group_id,
               g->generation, g->member_id, g->protocol, nadded, nrevoked);
    if (nrevoked > 0) {
        /* cooperative: give these up, then join again (KIP-429); an
           eager member owns nothing here (it revoked before joining) */
        coordinator_push(c, SAMSA_CEVENT_REVOKE, revoked, nrevoked, true);
        g->state = SAMSA_COORDINATOR_WAIT_APP;
    } else {
        samsa_free(revoked);
    }
}

static void
coordinator_on_sync(void *ctx, int32_t node, samsa_err_t err, samsa_rd_t *body,
               void *opaque)
{
    samsa_consumer_t           *c = ctx;
    samsa_coordinator_t             *g = &c->grp;
    samsa_SyncGroupResponse_t   resp;
    samsa_cproto_asg_t          asg;
    samsa_arena_t               arena = SAMSA_ARENA_INIT;

    (void) node;
    pthread_mutex_lock(&c->lock);
    if (g->state != SAMSA_COORDINATOR_SYNCING) {
        goto out;
    }
    g->state = SAMSA_COORDINATOR_NEED_JOIN;
    if (err == SAMSA_ERR_NONE) {
        err = samsa_SyncGroupResponse_decode(body, (int16_t) (intptr_t) opaque,
                                             &arena, &resp);
    }
    if (err == SAMSA_ERR_NONE) {
        err = (samsa_err_t) resp.ErrorCode;
    }
    if (err != SAMSA_ERR_NONE) {
        coordinator_rejoin_err(c, err, "SyncGroup");
        goto out;
    }
    if (samsa_cproto_asg_decode((const uint8_t *) resp.Assignment.ptr,
                                resp.Assignment.len, &asg)
        != SAMSA_ERR_NONE) {
        samsa_warn("consumer: the group leader's assignment does not "
                   "parse: rejoining");
        goto out;
    }
    coordinator_apply(c, &asg);
    samsa_cproto_asg_fini(&asg);
out:
    samsa_arena_fini(&arena);
    pthread_mutex_unlock(&c->lock);
}

/* Leader: metadata for every member's topics is in (fresh)? */
static bool
coordinator_md_ready(samsa_consumer_t *c)
{
    samsa_coordinator_t  *g = &c->grp;
    int32_t          i, j;

    if (c->md_inflight || samsa_mdcache_update_requested(c->mdc)) {
        return false;
    }
    for (i = 0; i < g->nmembers; i++) {
        for (j = 0; j < g->members[i].sub.ntopics; j++) {
            const char  *t = g->members[i].sub.topics[j];

            if (samsa_consumer_md_find(c, t, strlen(t)) == NULL) {
                return false;
            }
        }
    }
    return true;
}

/* Leader: run the group's assignor.  assignments[i] for members[i]. */
static void
coordinator_assign(samsa_consumer_t *c, samsa_buf_t *assignments)
{
    samsa_coordinator_t      *g = &c->grp;
    samsa_asg_member_t  *am;
    samsa_asg_topic_t   *at;
    samsa_cproto_asg_t  *out;
    const samsa_mdtopic_t  *t;
    int32_t              i, nt = 0, nmd = samsa_mdcache_count(c->mdc);

    am = samsa_calloc((size_t) g->nmembers + 1, sizeof(*am));
    out = samsa_calloc((size_t) g->nmembers + 1, sizeof(*out));
    at = samsa_calloc((size_t) nmd + 1, sizeof(*at));
    for (i = 0; i < g->nmembers; i++) {
        am[i].member_id = g->members[i].member_id;
        am[i].instance_id = g->members[i].instance_id;
        am[i].sub = &g->members[i].sub;
    }
    for (i = 0; i < nmd; i++) {
        t = samsa_mdcache_peek_at(c->mdc, i);
        if (t != NULL && t->err == SAMSA_ERR_NONE && t->npartitions > 0) {
            at[nt].name = t->name;
            at[nt].nparts = t->npartitions;
            nt++;
        }
    }
    if (samsa_assignor_assign(g->protocol, am, g->nmembers, at, nt, out)
        != SAMSA_ERR_NONE) {
        samsa_warn("consumer: the group chose assignor '%s', which "
                   "libsamsa does not have: assigning nothing",
                   g->protocol);
        for (i = 0; i < g->nmembers; i++) {
            memset(&out[i], 0, sizeof(out[i]));
        }
    }
    for (i = 0; i < g->nmembers; i++) {
        samsa_buf_init(&assignments[i], 64);
        out[i].version = SAMSA_CPROTO_VERSION_MAX;
        samsa_cproto_asg_encode(&out[i], &assignments[i]);
        samsa_cproto_asg_fini(&out[i]);
    }
    samsa_free(am);
    samsa_free(at);
    samsa_free(out);
}

static void
coordinator_sync(samsa_consumer_t *c, int64_t now)
{
    samsa_coordinator_t                       *g = &c->grp;
    samsa_SyncGroupRequest_t              req;
    samsa_SyncGroupRequestAssignment_t   *ra;
    samsa_buf_t                           frame = SAMSA_BUF_INIT;
    samsa_buf_t                          *bufs;
    samsa_wr_t                            wr;
    int32_t                               i;
    int16_t                               v;

    if (g->nmembers > 0 && !coordinator_md_ready(c)) {
        return;
    }
    if ((v = coordinator_version(c, SAMSA_API_SyncGroup, 0, 5)) < 0) {
        return;
    }
    bufs = samsa_calloc((size_t) g->nmembers + 1, sizeof(*bufs));
    ra = samsa_calloc((size_t) g->nmembers + 1, sizeof(*ra));
    if (g->nmembers > 0) {
        coordinator_assign(c, bufs);
    }
    for (i = 0; i < g->nmembers; i++) {
        samsa_SyncGroupRequestAssignment_init(&ra[i]);
        ra[i].MemberId = samsa_slice_cstr(g->members[i].member_id);
        ra[i].Assignment = (samsa_slice_t) { (const char *) bufs[i].data,
                                             bufs[i].len };
    }
    samsa_SyncGroupRequest_init(&req);
    req.GroupId = samsa_slice_cstr(c->cc.group_id);
    req.GenerationId = g->generation;
    req.MemberId = samsa_slice_cstr(g->member_id);
    req.GroupInstanceId = coordinator_instance_id(c);
    req.ProtocolType = samsa_slice_cstr("consumer");
    req.ProtocolName = samsa_slice_cstr(g->protocol);
    req.Assignments = ra;
    req.Assignments_cnt = g->nmembers;
    samsa_netclient_frame_begin(c->nc, SAMSA_API_SyncGroup, v, &frame, &wr);
    samsa_SyncGroupRequest_encode(&wr, v, &req);
    for (i = 0; i < g->nmembers; i++) {
        samsa_buf_fini(&bufs[i]);
    }
    samsa_free(bufs);
    samsa_free(ra);
    coordinator_members_free(g);
    if (coordinator_send(c, &frame, SAMSA_API_SyncGroup, v, coordinator_on_sync,
                    (void *) (intptr_t) v, now)) {
        g->state = SAMSA_COORDINATOR_SYNCING;
    } else {
        g->state = SAMSA_COORDINATOR_NEED_JOIN;
    }
}

/* ---- Heartbeat ---------------------------------------------------------- */

static void
coordinator_on_heartbeat(void *ctx, int32_t node, samsa_err_t err,
                    samsa_rd_t *body, void *opaque)
{
    samsa_consumer_t           *c = ctx;
    samsa_coordinator_t             *g = &c->grp;
    samsa_HeartbeatResponse_t   resp;
    samsa_arena_t               arena = SAMSA_ARENA_INIT;

    (void) node;
    pthread_mutex_lock(&c->lock);
    g->hb_inflight = false;
    if (err == SAMSA_ERR_NONE) {
        err = samsa_HeartbeatResponse_decode(body, (int16_t) (intptr_t) opaque,
                                             &arena, &resp);
    }
    if (err == SAMSA_ERR_NONE) {
        err = (samsa_err_t) resp.ErrorCode;
    }
    if (err == SAMSA_ERR_NONE) {
        g->hb_last_ok_ms = samsa_now_ms();
    } else if (g->state != SAMSA_COORDINATOR_STABLE
               && g->state != SAMSA_COORDINATOR_WAIT_APP) {
        /* a join is under way: it will sort things out */
    } else if (err == SAMSA_ERR_REBALANCE_IN_PROGRESS) {
        if (g->state == SAMSA_COORDINATOR_STABLE) {
            samsa_debug("consumer: group %s is rebalancing: rejoining",
                        c->cc.group_id);
            g->state = SAMSA_COORDINATOR_NEED_JOIN;
        }
    } else if (err == SAMSA_ERR_UNKNOWN_MEMBER_ID
               || err == SAMSA_ERR_ILLEGAL_GENERATION) {
        samsa_warn("consumer: heartbeat: %s: partitions lost, rejoining",
                   samsa_err_name(err));
        if (g->state == SAMSA_COORDINATOR_STABLE) {
            coordinator_lose(c, true);
        }
    } else if (err == SAMSA_ERR_FENCED_INSTANCE_ID) {
        coordinator_fatal(c, err, "Heartbeat");
    } else if (coordinator_coord_err(err)) {
        coordinator_coord_dead(c, err);
    }
    samsa_arena_fini(&arena);
    pthread_mutex_unlock(&c->lock);
}

static void
coordinator_heartbeat(samsa_consumer_t *c, int64_t now)
{
    samsa_coordinator_t            *g = &c->grp;
    samsa_HeartbeatRequest_t   req;
    samsa_buf_t                frame = SAMSA_BUF_INIT;
    samsa_wr_t                 wr;
    int16_t                    v;

    if (g->hb_inflight || now < g->hb_next_ms || g->generation < 0
        || (v = coordinator_version(c, SAMSA_API_Heartbeat, 0, 4)) < 0) {
        return;
    }
    samsa_HeartbeatRequest_init(&req);
    req.GroupId = samsa_slice_cstr(c->cc.group_id);
    req.GenerationId = g->generation;
    req.MemberId = samsa_slice_cstr(g->member_id);
    req.GroupInstanceId = coordinator_instance_id(c);
    samsa_netclient_frame_begin(c->nc, SAMSA_API_Heartbeat, v, &frame, &wr);
    samsa_HeartbeatRequest_encode(&wr, v, &req);
    if (coordinator_send(c, &frame, SAMSA_API_Heartbeat, v, coordinator_on_heartbeat,
                    (void *) (intptr_t) v, now)) {
        g->hb_inflight = true;
        g->hb_next_ms = now + c->cc.heartbeat_interval_ms;
    }
}

/* ---- LeaveGroup --------------------------------------------------------- */

static void
coordinator_on_leave(void *ctx, int32_t node, samsa_err_t err, samsa_rd_t *body,
                void *opaque)
{
    samsa_consumer_t  *c = ctx;
    samsa_cop_t       *op = opaque;

    (void) node;
    (void) body;
    pthread_mutex_lock(&c->lock);
    if (op != NULL) {
        samsa_consumer_op_done(c, op, err);
    }
    pthread_mutex_unlock(&c->lock);
}

/* Send LeaveGroup for this member and forget the membership.  op (may
 * be NULL) completes with the answer. */
static bool
coordinator_leave(samsa_consumer_t *c, samsa_cop_t *op, int64_t now)
{
    samsa_coordinator_t             *g = &c->grp;
    samsa_LeaveGroupRequest_t   req;
    samsa_MemberIdentity_t      mi;
    samsa_buf_t                 frame = SAMSA_BUF_INIT;
    samsa_wr_t                  wr;
    int16_t                     v;
    bool                        ok;

    if ((v = coordinator_version(c, SAMSA_API_LeaveGroup, 0, 5)) < 0) {
        return false;
    }
    samsa_info("consumer: member %s leaving group %s", g->member_id,
               c->cc.group_id);
    samsa_MemberIdentity_init(&mi);
    mi.MemberId = samsa_slice_cstr(g->member_id);
    mi.GroupInstanceId = coordinator_instance_id(c);
    mi.Reason = samsa_slice_cstr("the consumer is leaving the group");
    samsa_LeaveGroupRequest_init(&req);
    req.GroupId = samsa_slice_cstr(c->cc.group_id);
    req.MemberId = samsa_slice_cstr(g->member_id);
    req.Members = &mi;
    req.Members_cnt = 1;
    samsa_netclient_frame_begin(c->nc, SAMSA_API_LeaveGroup, v, &frame, &wr);
    samsa_LeaveGroupRequest_encode(&wr, v, &req);
    ok = coordinator_send(c, &frame, SAMSA_API_LeaveGroup, v, coordinator_on_leave, op,
                     now);
    coordinator_set_str(&g->member_id, samsa_slice_cstr(""));
    g->generation = -1;
    g->state = SAMSA_COORDINATOR_IDLE;
    return ok;
}

/* ---- OffsetCommit ------------------------------------------------------- */

typedef struct coordinator_commit {
    samsa_cop_t  *op;
    int16_t       version;
} coordinator_commit_t;

static void
coordinator_on_commit(void *ctx, int32_t node, samsa_err_t err, samsa_rd_t *body,
                 void *opaque)
{
    samsa_consumer_t              *c = ctx;
    coordinator_commit_t               *cm = opaque;
    samsa_cop_t                   *op = cm->op;
    samsa_OffsetCommitResponse_t   resp;
    samsa_arena_t                  arena = SAMSA_ARENA_INIT;
    samsa_err_t                    first = SAMSA_ERR_NONE;
    int32_t                        i, j;
    size_t                         k;

    (void) node;
    pthread_mutex_lock(&c->lock);
    if (err == SAMSA_ERR_NONE) {
        err = samsa_OffsetCommitResponse_decode(body, cm->version, &arena,
                                                &resp);
    }
    for (i = 0; err == SAMSA_ERR_NONE && i < resp.Topics_cnt; i++) {
        for (j = 0; j < resp.Topics[i].Partitions_cnt; j++) {
            const samsa_OffsetCommitResponsePartition_t  *pr =
                &resp.Topics[i].Partitions[j];

            for (k = 0; k < op->n; k++) {
                if (op->tps[k].partition == pr->PartitionIndex
                    && samsa_slice_eq_cstr(resp.Topics[i].Name,
                                           op->tps[k].topic)) {
                    op->tps[k].err = (samsa_err_t) pr->ErrorCode;
                    if (pr->ErrorCode != 0 && first == SAMSA_ERR_NONE) {
                        first = (samsa_err_t) pr->ErrorCode;
                    }
                }
            }
        }
    }
    if (err == SAMSA_ERR_NONE) {
        atomic_fetch_add_explicit(&c->m_commits, 1, memory_order_relaxed);
        err = first;
    }
    if (err == SAMSA_ERR_NONE) {
        for (k = 0; k < op->n; k++) {
            samsa_cpart_t  *p = samsa_consumer_part_find(
                c, op->tps[k].topic, strlen(op->tps[k].topic),
                op->tps[k].partition);

            if (p != NULL) {
                p->committed = op->tps[k].offset;
            }
        }
    }
    if (err == SAMSA_ERR_STALE_MEMBER_EPOCH && op->waited
        && samsa_now_ms() < op->deadline_ms) {
        /* KIP-848: the epoch moved on; send again once a heartbeat
           brought the new one (Java retries it) */
        op->sent = false;
        op->not_before_ms = samsa_now_ms() + c->cc.net.retry_backoff_ms;
        op->next = c->op_head;
        c->op_head = op;
        if (c->op_tail == NULL) {
            c->op_tail = op;
        }
        goto out;
    }
    if (coordinator_coord_err(err) && err != SAMSA_ERR__SHUTDOWN) {
        coordinator_coord_dead(c, err);
        if (op->waited && samsa_now_ms() < op->deadline_ms) {
            op->sent = false;           /* try again (commit_sync) */
            op->next = c->op_head;
            c->op_head = op;
            if (c->op_tail == NULL) {
                c->op_tail = op;
            }
            goto out;
        }
    }
    if (c->cc.group_protocol_consumer) {
        /* KIP-848: the heartbeat alone decides about the membership */
    } else if ((err == SAMSA_ERR_UNKNOWN_MEMBER_ID
                || err == SAMSA_ERR_ILLEGAL_GENERATION)
               && c->grp.state == SAMSA_COORDINATOR_STABLE) {
        coordinator_lose(c, true);
    } else if (err == SAMSA_ERR_REBALANCE_IN_PROGRESS
               && c->grp.state == SAMSA_COORDINATOR_STABLE) {
        c->grp.state = SAMSA_COORDINATOR_NEED_JOIN;
    }
    if (err != SAMSA_ERR_NONE && !op->is_auto) {
        samsa_debug("consumer: commit failed: %s", samsa_err_name(err));
    }
    samsa_consumer_op_done(c, op, err);
out:
    samsa_free(cm);
    samsa_arena_fini(&arena);
    pthread_mutex_unlock(&c->lock);
}

static void
coordinator_commit(samsa_consumer_t *c, samsa_cop_t *op, int64_t now)
{
    samsa_coordinator_t                    *g = &c->grp;
    samsa_OffsetCommitRequest_t        req;
    samsa_OffsetCommitRequestTopic_t  *topics;
    samsa_OffsetCommitRequestPartition_t  *parts;
    samsa_buf_t                        frame = SAMSA_BUF_INIT;
    samsa_wr_t                         wr;
    coordinator_commit_t                   *cm;
    int32_t                            nt = 0, i;
    size_t                             k, off = 0;
    int16_t                            v;
    bool                               member;

    /* v9: the generation may be a KIP-848 member epoch */
    if ((v = coordinator_version(c, SAMSA_API_OffsetCommit,
                            c->cc.group_protocol_consumer ? 9 : 2,
                            c->cc.group_protocol_consumer ? 9 : 8)) < 0) {
        return;
    }
    samsa_consumer_op_unlink(c, op);
    op->sent = true;
    topics = samsa_calloc(op->n + 1, sizeof(*topics));
    parts = samsa_calloc(op->n + 1, sizeof(*parts));
    for (k = 0; k < op->n; k++) {
        for (i = 0; i < nt; i++) {
            if (samsa_slice_eq_cstr(topics[i].Name, op->tps[k].topic)) {
                break;
            }
        }
        if (i == nt) {
            samsa_OffsetCommitRequestTopic_init(&topics[nt]);
            topics[nt].Name = samsa_slice_cstr(op->tps[k].topic);
            nt++;
        }
    }
    for (i = 0; i < nt; i++) {
        topics[i].Partitions = &parts[off];
        for (k = 0; k < op->n; k++) {
            if (samsa_slice_eq_cstr(topics[i].Name, op->tps[k].topic)) {
                samsa_OffsetCommitRequestPartition_init(&parts[off]);
                parts[off].PartitionIndex = op->tps[k].partition;
                parts[off].CommittedOffset = op->tps[k].offset;
                parts[off].CommittedMetadata = samsa_slice_cstr("");
                off++;
                topics[i].Partitions_cnt++;
            }
        }
    }
    member = coordinator_subscribed(c) && g->generation >= 0;
    samsa_OffsetCommitRequest_init(&req);
    req.GroupId = samsa_slice_cstr(c->cc.group_id);
    req.GenerationIdOrMemberEpoch = member ? g->generation : -1;
    req.MemberId = samsa_slice_cstr(member ? g->member_id : "");
    req.GroupInstanceId = member ? coordinator_instance_id(c)
                                 : SAMSA_SLICE_NULL;
    req.RetentionTimeMs = -1;
    req.Topics = topics;
    req.Topics_cnt = nt;
    samsa_netclient_frame_begin(c->nc, SAMSA_API_OffsetCommit, v, &frame,
                                &wr);
    samsa_OffsetCommitRequest_encode(&wr, v, &req);
    samsa_free(topics);
    samsa_free(parts);
    cm = samsa_calloc(1, sizeof(*cm));
    cm->op = op;
    cm->version = v;
    if (!coordinator_send(c, &frame, SAMSA_API_OffsetCommit, v, coordinator_on_commit,
                     cm, now)) {
        coordinator_on_commit(c, c->grp.coord_node, SAMSA_ERR__STATE, NULL, cm);
    }
}

/* ---- OffsetFetch -------------------------------------------------------- */

typedef struct coordinator_ofetch {
    samsa_cop_t               *op;      /* committed(), or NULL: positions */
    int16_t                    version;
    samsa_topic_partition_t   *tps;     /* positions: what was asked */
    uint64_t                  *gens;
    size_t                     n;
} coordinator_ofetch_t;

static void
coordinator_position_from(samsa_consumer_t *c, const samsa_topic_partition_t *tp,
                     uint64_t gen, int64_t offset, samsa_err_t err)
{
    samsa_cpart_t  *p = samsa_consumer_part_at_gen(c, tp->topic, tp->partition,
                                                   gen);

    if (p == NULL) {
        return;
    }
    p->of_inflight = false;
    if (p->state != SAMSA_CPART_NEED_COMMITTED) {
        return;
    }
    if (err != SAMSA_ERR_NONE) {
        p->backoff_until_ms = samsa_now_ms() + c->cc.net.retry_backoff_ms;
        return;
    }
    if (offset >= 0) {
        p->state = SAMSA_CPART_READY;
        p->position = p->fetch_offset = offset;
        p->committed = offset;
    } else if (c->cc.auto_offset_reset == SAMSA_RESET_NONE) {
        p->err = SAMSA_ERR_OFFSET_OUT_OF_RANGE;     /* Java:
                                       NoOffsetForPartitionException */
        p->state = SAMSA_CPART_NEED_RESET;
        p->blocked = true;
    } else {
        p->state = SAMSA_CPART_NEED_RESET;
    }
    pthread_cond_broadcast(&c->cond);
}

/* v8+ answers per group: our one group's answer in the v0-7 fields. */
static samsa_err_t
coordinator_ofetch_flatten(samsa_OffsetFetchResponse_t *resp, samsa_arena_t *arena)
{
    const samsa_OffsetFetchResponseGroup_t  *g;
    int32_t                                  i, j;

    if (resp->Groups_cnt != 1) {
        return SAMSA_ERR__BAD_MSG;
    }
    g = &resp->Groups[0];
    resp->ErrorCode = g->ErrorCode;
    resp->Topics_cnt = g->Topics_cnt > 0 ? g->Topics_cnt : 0;
    resp->Topics = samsa_arena_calloc(arena, (size_t) resp->Topics_cnt + 1,
                                      sizeof(*resp->Topics));
    for (i = 0; i < resp->Topics_cnt; i++) {
        samsa_OffsetFetchResponseTopic_t  *t = &resp->Topics[i];

        t->Name = g->Topics[i].Name;
        t->Partitions_cnt = g->Topics[i].Partitions_cnt > 0
                                ? g->Topics[i].Partitions_cnt : 0;
        t->Partitions = samsa_arena_calloc(arena,
                                           (size_t) t->Partitions_cnt + 1,
                                           sizeof(*t->Partitions));
        for (j = 0; j < t->Partitions_cnt; j++) {
            const samsa_OffsetFetchResponsePartitions_t  *p =
                &g->Topics[i].Partitions[j];

            t->Partitions[j].PartitionIndex = p->PartitionIndex;
            t->Partitions[j].CommittedOffset = p->CommittedOffset;
            t->Partitions[j].CommittedLeaderEpoch = p->CommittedLeaderEpoch;
            t->Partitions[j].Metadata = p->Metadata;
            t->Partitions[j].ErrorCode = p->ErrorCode;
        }
    }
    return SAMSA_ERR_NONE;
}

static void
coordinator_on_ofetch(void *ctx, int32_t node, samsa_err_t err, samsa_rd_t *body,
                 void *opaque)
{
    samsa_consumer_t              *c = ctx;
    coordinator_ofetch_t               *of = opaque;
    samsa_OffsetFetchResponse_t    resp;
    samsa_arena_t                  arena = SAMSA_ARENA_INIT;
    samsa_topic_partition_t       *tps;
    size_t                         n, k;
    bool                          *seen;
    int32_t                        i, j;

    (void) node;
    pthread_mutex_lock(&c->lock);
    tps = of->op != NULL ? of->op->tps : of->tps;
    n = of->op != NULL ? of->op->n : of->n;
    seen = samsa_calloc(n + 1, sizeof(bool));
    if (of->op == NULL) {
        c->grp.of_inflight = false;
    }
    if (err == SAMSA_ERR_NONE) {
        err = samsa_OffsetFetchResponse_decode(body, of->version, &arena,
                                               &resp);
    }
    if (err == SAMSA_ERR_NONE && of->version >= 8) {
        err = coordinator_ofetch_flatten(&resp, &arena);
    }
    if (err == SAMSA_ERR_NONE && resp.ErrorCode != 0) {
        err = (samsa_err_t) resp.ErrorCode;
    }
    if (coordinator_coord_err(err) && err != SAMSA_ERR__SHUTDOWN) {
        coordinator_coord_dead(c, err);
    }
    for (i = 0; err == SAMSA_ERR_NONE && i < resp.Topics_cnt; i++) {
        for (j = 0; j < resp.Topics[i].Partitions_cnt; j++) {
            const samsa_OffsetFetchResponsePartition_t  *pr =
                &resp.Topics[i].Partitions[j];

            for (k = 0; k < n; k++) {
                if (seen[k] || tps[k].partition != pr->PartitionIndex
                    || !samsa_slice_eq_cstr(resp.Topics[i].Name,
                                            tps[k].topic)) {
                    continue;
                }
                seen[k] = true;
                if (of->op != NULL) {
                    tps[k].err = (samsa_err_t) pr->ErrorCode;
                    tps[k].offset = pr->CommittedOffset >= 0
                                        ? pr->CommittedOffset
                                        : SAMSA_OFFSET_INVALID;
                } else {
                    coordinator_position_from(c, &tps[k], of->gens[k],
                                         pr->CommittedOffset,
                                         (samsa_err_t) pr->ErrorCode);
                }
            }
        }
    }
    for (k = 0; k < n; k++) {
        if (seen[k]) {
            continue;
        }
        if (of->op != NULL) {
            tps[k].err = err != SAMSA_ERR_NONE ? err : SAMSA_ERR__BAD_MSG;
        } else {
            coordinator_position_from(c, &tps[k], of->gens[k], -1,
                                 err != SAMSA_ERR_NONE ? err
                                                       : SAMSA_ERR__BAD_MSG);
        }
    }
    if (of->op != NULL) {
        if (coordinator_coord_err(err) && err != SAMSA_ERR__SHUTDOWN
            && of->op->waited && samsa_now_ms() < of->op->deadline_ms) {
            of->op->sent = false;
            of->op->next = c->op_head;
            c->op_head = of->op;
            if (c->op_tail == NULL) {
                c->op_tail = of->op;
            }
        } else {
            samsa_consumer_op_done(c, of->op, err);
        }
    }
    samsa_free(seen);
    samsa_tp_array_free(of->tps, of->n);
    samsa_free(of->gens);
    samsa_free(of);
    samsa_arena_fini(&arena);
    pthread_mutex_unlock(&c->lock);
}

static void
coordinator_send_ofetch(samsa_consumer_t *c, coordinator_ofetch_t *of,
                   const samsa_topic_partition_t *tps, size_t n, int64_t now)
{
    samsa_OffsetFetchRequest_t        req;
    samsa_OffsetFetchRequestTopic_t  *topics;
    samsa_OffsetFetchRequestTopics_t *gtopics = NULL;
    samsa_OffsetFetchRequestGroup_t   grp;
    int32_t                          *idx, nt = 0, i;
    size_t                            k, off = 0;
    samsa_buf_t                       frame = SAMSA_BUF_INIT;
    samsa_wr_t                        wr;

    topics = samsa_calloc(n + 1, sizeof(*topics));
    idx = samsa_calloc(n + 1, sizeof(int32_t));
    for (k = 0; k < n; k++) {
        for (i = 0; i < nt; i++) {
            if (samsa_slice_eq_cstr(topics[i].Name, tps[k].topic)) {
                break;
            }
        }
        if (i == nt) {
            samsa_OffsetFetchRequestTopic_init(&topics[nt]);
            topics[nt].Name = samsa_slice_cstr(tps[k].topic);
            nt++;
        }
    }
    for (i = 0; i < nt; i++) {
        topics[i].PartitionIndexes = &idx[off];
        for (k = 0; k < n; k++) {
            if (samsa_slice_eq_cstr(topics[i].Name, tps[k].topic)) {
                idx[off++] = tps[k].partition;
                topics[i].PartitionIndexes_cnt++;
            }
        }
    }
    samsa_OffsetFetchRequest_init(&req);
    req.GroupId = samsa_slice_cstr(c->cc.group_id);
    req.Topics = topics;
    req.Topics_cnt = nt;
    if (of->version >= 8) {
        /* KIP-848 (v9): one group, with the member id and epoch while in
           it, so that the coordinator can check them */
        gtopics = samsa_calloc((size_t) nt + 1, sizeof(*gtopics));
        for (i = 0; i < nt; i++) {
            samsa_OffsetFetchRequestTopics_init(&gtopics[i]);
            gtopics[i].Name = topics[i].Name;
            gtopics[i].PartitionIndexes = topics[i].PartitionIndexes;
            gtopics[i].PartitionIndexes_cnt = topics[i].PartitionIndexes_cnt;
        }
        samsa_OffsetFetchRequestGroup_init(&grp);
        grp.GroupId = req.GroupId;
        if (coordinator_subscribed(c) && c->grp.generation >= 0) {
            grp.MemberId = samsa_slice_cstr(c->grp.member_id);
            grp.MemberEpoch = c->grp.generation;
        }
        grp.Topics = gtopics;
        grp.Topics_cnt = nt;
        req.Groups = &grp;
        req.Groups_cnt = 1;
    }
    samsa_netclient_frame_begin(c->nc, SAMSA_API_OffsetFetch, of->version,
                                &frame, &wr);
    samsa_OffsetFetchRequest_encode(&wr, of->version, &req);
    samsa_free(gtopics);
    samsa_free(topics);
    samsa_free(idx);
    if (!coordinator_send(c, &frame, SAMSA_API_OffsetFetch, of->version,
                     coordinator_on_ofetch, of, now)) {
        coordinator_on_ofetch(c, c->grp.coord_node, SAMSA_ERR__STATE, NULL, of);
    }
}

/* OffsetFetch v9 (member id and epoch) with group.protocol=consumer when
 * the coordinator has it, as Java's AsyncKafkaConsumer; else v1-7. */
static int16_t
coordinator_ofetch_version(samsa_consumer_t *c)
{
    int16_t  v = -1;

    if (c->cc.group_protocol_consumer) {
        v = coordinator_version(c, SAMSA_API_OffsetFetch, 9, 9);
    }
    return v >= 0 ? v : coordinator_version(c, SAMSA_API_OffsetFetch, 1, 7);
}

/* Committed offsets for partitions that need a starting position. */
static void
coordinator_positions(samsa_consumer_t *c, int64_t now)
{
    coordinator_ofetch_t  *of;
    int32_t           i;
    int16_t           v;

    if (c->grp.of_inflight || (v = coordinator_ofetch_version(c)) < 0) {
        return;
    }
    of = samsa_calloc(1, sizeof(*of));
    of->version = v;
    of->tps = samsa_calloc((size_t) c->nparts + 1, sizeof(*of->tps));
    of->gens = samsa_calloc((size_t) c->nparts + 1, sizeof(uint64_t));
    for (i = 0; i < c->nparts; i++) {
        samsa_cpart_t  *p = c->parts[i];

        if (p->state != SAMSA_CPART_NEED_COMMITTED || p->of_inflight
            || now < p->backoff_until_ms) {
            continue;
        }
        p->of_inflight = true;
        of->tps[of->n].topic = samsa_strdup(p->topic);
        of->tps[of->n].partition = p->partition;
        of->gens[of->n] = p->gen;
        of->n++;
    }
    if (of->n == 0) {
        samsa_free(of->tps);
        samsa_free(of->gens);
        samsa_free(of);
        return;
    }
    c->grp.of_inflight = true;
    coordinator_send_ofetch(c, of, of->tps, of->n, now);
}

static void
coordinator_committed_op(samsa_consumer_t *c, samsa_cop_t *op, int64_t now)
{
    coordinator_ofetch_t  *of;
    int16_t           v;

    if ((v = coordinator_ofetch_version(c)) < 0) {
        return;
    }
    samsa_consumer_op_unlink(c, op);
    op->sent = true;
    of = samsa_calloc(1, sizeof(*of));
    of->op = op;
    of->version = v;
    coordinator_send_ofetch(c, of, op->tps, op->n, now);
}

/* ---- the state machine -------------------------------------------------- */

static bool
coordinator_needs_coordinator(samsa_consumer_t *c)
{
    samsa_cop_t  *op;
    int32_t       i;

    if (c->cc.group_id == NULL) {
        return false;
    }
    if (c->grp.state != SAMSA_COORDINATOR_IDLE) {
        return true;
    }
    for (op = c->op_head; op != NULL; op = op->next) {
        if (op->kind != SAMSA_COP_LIST_OFFSETS) {
            return true;
        }
    }
    for (i = 0; i < c->nparts; i++) {
        if (c->parts[i]->state == SAMSA_CPART_NEED_COMMITTED) {
            return true;
        }
    }
    return false;
}

/* Operations that need the coordinator: send, or fail past deadline. */
static void
coordinator_ops(samsa_consumer_t *c, int64_t now, bool ready)
{
    samsa_cop_t  *op, *next;

    for (op = c->op_head; op != NULL; op = next) {
        next = op->next;
        if (op->kind == SAMSA_COP_LIST_OFFSETS || op->sent) {
            continue;
        }
        if (op->kind == SAMSA_COP_LEAVE) {
            samsa_consumer_op_unlink(c, op);
            if (!ready || c->grp.mship == NULL
                || !c->grp.mship->leave(c, op, now)) {
                samsa_consumer_op_done(c, op, ready ? SAMSA_ERR_NONE
                                                    : SAMSA_ERR__STATE);
            }
            continue;
        }
        if (!ready || now < op->not_before_ms) {
            if (op->deadline_ms > 0 && now >= op->deadline_ms) {
                samsa_consumer_op_unlink(c, op);
                samsa_consumer_op_done(c, op, SAMSA_ERR__TIMED_OUT);
            }
            continue;
        }
        if (op->kind == SAMSA_COP_COMMIT) {
            coordinator_commit(c, op, now);
        } else if (op->kind == SAMSA_COP_COMMITTED) {
            coordinator_committed_op(c, op, now);
        }
    }
}

void
samsa_coordinator_autocommit(samsa_consumer_t *c, int64_t now)
{
    samsa_cop_t  *op;
    int32_t       i;

    if (!c->cc.enable_auto_commit || now < c->next_autocommit_ms) {
        return;
    }
    c->next_autocommit_ms = now + c->cc.auto_commit_interval_ms;
    if (coordinator_subscribed(c) && c->grp.state != SAMSA_COORDINATOR_STABLE) {
        return;
    }
    op = samsa_calloc(1, sizeof(*op));
    op->kind = SAMSA_COP_COMMIT;
    op->is_auto = true;
    op->deadline_ms = now + c->cc.auto_commit_interval_ms;
    op->tps = samsa_calloc((size_t) c->nparts + 1, sizeof(*op->tps));
    for (i = 0; i < c->nparts; i++) {
        samsa_cpart_t  *p = c->parts[i];

        if (p->state == SAMSA_CPART_READY && p->position >= 0
            && p->position != p->committed) {
            op->tps[op->n].topic = samsa_strdup(p->topic);
            op->tps[op->n].partition = p->partition;
            op->tps[op->n].offset = p->position;
            op->n++;
        }
    }
    if (op->n == 0) {
        samsa_tp_array_free(op->tps, 0);
        samsa_free(op);
        return;
    }
    samsa_consumer_op_push(c, op);
}

/* max.poll.interval.ms: leave the group, lose the partitions; the next
 * poll() joins again (Java). */
static void
coordinator_poll_timeout(samsa_consumer_t *c, int64_t now)
{
    samsa_coordinator_t  *g = &c->grp;

    if (g->state != SAMSA_COORDINATOR_STABLE
        || !samsa_coordinator_poll_overdue(c, now)) {
        return;
    }
    if (c->cc.group_instance_id == NULL) {
        (void) coordinator_leave(c, NULL, now);
    }
    coordinator_lose(c, true);
}

int64_t
samsa_coordinator_work(samsa_consumer_t *c, int64_t now)
{
    samsa_coordinator_t  *g = &c->grp;
    bool             ready;

    if (!coordinator_needs_coordinator(c)) {
        return COORDINATOR_IDLE_MS;
    }
    if (g->coord_id < 0) {
        coordinator_find(c, now);
    }
    ready = g->coord_id >= 0
            && samsa_netclient_ready(c->nc, g->coord_node, now);
    if (!ready && g->coord_id >= 0
        && !samsa_netclient_connected(c->nc, g->coord_node)
        && now >= g->coord_retry_ms + 5 * c->cc.net.retry_backoff_ms) {
        /* connection keeps failing: ask who the coordinator is again */
        coordinator_coord_dead(c, SAMSA_ERR__CLOSED);
    }
    coordinator_ops(c, now, ready);
    if (!ready || g->fatal != SAMSA_ERR_NONE) {
        return COORDINATOR_IDLE_MS;
    }
    if (g->mship != NULL) {
        g->mship->step(c, now);
    }
    coordinator_positions(c, now);
    if (c->cc.group_protocol_consumer) {
        return g->k848.hb_inflight || g->k848.hb_next_ms <= now
                   ? COORDINATOR_IDLE_MS
                   : g->k848.hb_next_ms - now;
    }
    return g->state == SAMSA_COORDINATOR_STABLE
               ? (g->hb_next_ms > now ? g->hb_next_ms - now : 0)
               : COORDINATOR_IDLE_MS;
}

/* ---- the classic membership ----------------------------------------------- */

static void
coordinator_classic_step(samsa_consumer_t *c, int64_t now)
{
    samsa_coordinator_t  *g = &c->grp;

    switch (g->state) {
    case SAMSA_COORDINATOR_NEED_JOIN:
        if (!g->cooperative && c->nparts > 0) {
            size_t                    n;
            samsa_topic_partition_t  *tps = coordinator_owned(c, &n);

            coordinator_push(c, SAMSA_CEVENT_REVOKE, tps, n, true);
            g->state = SAMSA_COORDINATOR_WAIT_APP;
            break;
        }
        coordinator_join(c, now);
        break;
    case SAMSA_COORDINATOR_AWAIT_MD:
        coordinator_sync(c, now);
        break;
    case SAMSA_COORDINATOR_STABLE:
    case SAMSA_COORDINATOR_WAIT_APP:
        coordinator_heartbeat(c, now);
        coordinator_poll_timeout(c, now);
        break;
    default:
        break;
    }
}

static void
coordinator_classic_join(samsa_consumer_t *c)
{
    if (c->grp.state == SAMSA_COORDINATOR_IDLE
        || c->grp.state == SAMSA_COORDINATOR_STABLE) {
        c->grp.state = SAMSA_COORDINATOR_NEED_JOIN;
    }
}

static bool
coordinator_classic_leave(samsa_consumer_t *c, samsa_cop_t *op, int64_t now)
{
    return c->grp.member_id[0] != '\0' && coordinator_leave(c, op, now);
}

static void
coordinator_classic_event_done(samsa_consumer_t *c, const samsa_cevent_t *ev)
{
    if (ev->rejoin && c->grp.state == SAMSA_COORDINATOR_WAIT_APP) {
        c->grp.state = SAMSA_COORDINATOR_NEED_JOIN;
        samsa_netclient_wakeup(c->nc);
    }
}

static void
coordinator_classic_reset(samsa_consumer_t *c)
{
    c->grp.state = SAMSA_COORDINATOR_IDLE;
    c->grp.generation = -1;
}

const samsa_group_protocol_t  samsa_group_protocol_classic = {
    .name = "classic",
    .join = coordinator_classic_join,
    .step = coordinator_classic_step,
    .md_changed = coordinator_classic_md_changed,
    .leave = coordinator_classic_leave,
    .event_done = coordinator_classic_event_done,
    .reset = coordinator_classic_reset,
};
