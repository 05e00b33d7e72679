/*
 * client/consumer/coordinator_consumer.c - the consumer's membership with
 * group.protocol=consumer (KIP-848, Java's AsyncKafkaConsumer): the
 * ConsumerGroupHeartbeat requests and answers around the state machine
 * of membership.c, and reconciliation with the consumer's partitions:
 *   - heartbeat at the coordinator's interval (at once when joining,
 *     acknowledging or leaving), one in flight;
 *   - a new assignment: topic ids resolved by Metadata (v10+ topic ids;
 *     unknown ones wait for a refresh); removed partitions are paused,
 *     then a REVOKE event runs in the app's poll() (auto-commit, REVOKED
 *     callback, drop); then the added ones are assigned (ASSIGNED
 *     callback, positions from committed offsets / auto.offset.reset)
 *     and the next heartbeat acknowledges the owned set;
 *   - FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID: a LOST event, then a
 *     rejoin with epoch 0 and the same member id;
 *   - leave (close, unsubscribe, max.poll.interval.ms): epoch -1, or -2
 *     for a static member (group.instance.id).
 * Commits (coordinator.c) carry the member id and epoch (OffsetCommit v9):
 * c->grp.member_id and c->grp.generation mirror them here.
 * Threads: the background thread, c->lock held; event_done() on the app
 * thread, c->lock held.
 */
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "client/consumer/consumer_int.h"
#include "proto/gen/ConsumerGroupHeartbeat.h"
#include "proto/gen/apis.h"
#include "util/alloc.h"
#include "util/arena.h"
#include "util/diag.h"
#include "util/time.h"

/* in consumer.c */
void samsa_consumer_parts_add(samsa_consumer_t *c,
                              const samsa_topic_partition_t *tps, size_t n);

static bool
membership_subscribed(const samsa_consumer_t *c)
{
    return c->sub_mode == SAMSA_CSUB_TOPICS
           || c->sub_mode == SAMSA_CSUB_PATTERN;
}

/* The member id once, from 16 random bytes. */
static void
membership_ensure_id(samsa_consumer_t *c)
{
    uint8_t  rnd[16];
    size_t   i;

    if (c->grp.k848_id_set) {
        return;
    }
    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t) sizeof(rnd)) {
        uint64_t  x = (uint64_t) samsa_now_ns() ^ ((uint64_t) getpid() << 32)
                      ^ (uint64_t) (uintptr_t) c;

        for (i = 0; i < sizeof(rnd); i++) {     /* splitmix64 */
            uint64_t  z = (x += 0x9e3779b97f4a7c15ULL);

            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
            rnd[i] = (uint8_t) (z ^ (z >> 31));
        }
    }
    samsa_membership_init(&c->grp.k848, rnd, c->cc.group_instance_id != NULL);
    c->grp.k848_id_set = true;
}

/* Mirror the state machine into the shared group fields (commits use
 * generation and member_id; auto-commit and the coordinator loop look
 * at state). */
static void
membership_mirror(samsa_consumer_t *c)
{
    samsa_coordinator_t  *g = &c->grp;
    samsa_membership_t   *sm = &g->k848;

    if (strcmp(g->member_id, sm->member_id) != 0) {
        samsa_free(g->member_id);
        g->member_id = samsa_strdup(sm->member_id);
    }
    g->generation = sm->epoch > 0 ? sm->epoch : -1;
    switch (sm->state) {
    case SAMSA_MEMBERSHIP_UNSUBSCRIBED:
    case SAMSA_MEMBERSHIP_FATAL:
        g->state = membership_subscribed(c) && !g->k848_left
                       ? SAMSA_COORDINATOR_NEED_JOIN : SAMSA_COORDINATOR_IDLE;
        break;
    case SAMSA_MEMBERSHIP_JOINING:
        g->state = SAMSA_COORDINATOR_JOINING;
        break;
    case SAMSA_MEMBERSHIP_FENCED:
        g->state = SAMSA_COORDINATOR_WAIT_APP;
        break;
    case SAMSA_MEMBERSHIP_LEAVING:
        g->state = SAMSA_COORDINATOR_JOINING;    /* coordinator still needed */
        break;
    default:
        g->state = SAMSA_COORDINATOR_STABLE;
        break;
    }
    if (sm->fatal != SAMSA_ERR_NONE && g->fatal == SAMSA_ERR_NONE) {
        samsa_coordinator_fatal(c, sm->fatal, "ConsumerGroupHeartbeat");
    }
}

static samsa_topic_partition_t *
membership_tps(const samsa_membership_tp_t *in, int32_t n)
{
    samsa_topic_partition_t  *out = samsa_calloc((size_t) n + 1,
                                                 sizeof(*out));
    int32_t                   i;

    for (i = 0; i < n; i++) {
        out[i].topic = samsa_strdup(in[i].topic);
        out[i].partition = in[i].partition;
        out[i].offset = SAMSA_OFFSET_INVALID;
    }
    return out;
}

/* ---- reconciliation ----------------------------------------------------- */

static const char *
membership_resolve(void *ctx, samsa_uuid_t id)
{
    samsa_consumer_t  *c = ctx;

    return samsa_mdcache_topic_by_id(c->mdc, id);
}

/* Assign the partitions the reconciliation adds and let the next
 * heartbeat acknowledge the owned set. */
static void
membership_assign_added(samsa_consumer_t *c)
{
    samsa_coordinator_t           *g = &c->grp;
    samsa_topic_partition_t  *tps;
    size_t                    n = (size_t) g->nk848_added;

    tps = membership_tps(g->k848_added, g->nk848_added);
    samsa_membership_tps_free(g->k848_added, g->nk848_added);
    g->k848_added = NULL;
    g->nk848_added = 0;
    samsa_consumer_parts_add(c, tps, n);
    samsa_coordinator_push(c, SAMSA_CEVENT_ASSIGN, tps, n, false);
    samsa_membership_reconciled(&g->k848);
    atomic_fetch_add_explicit(&c->m_rebalances, 1, memory_order_relaxed);
    if (g->join_start_ns != 0) {
        atomic_fetch_add_explicit(&c->m_rebalance_ns,
                                  samsa_now_ns() - g->join_start_ns,
                                  memory_order_relaxed);
        g->join_start_ns = 0;
    }
    samsa_info("consumer: group %s member %s epoch %d: %zu partition(s) "
               "added, %d owned", c->cc.group_id, g->k848.member_id,
               g->k848.epoch, n, g->k848.nowned);
    samsa_netclient_wakeup(c->nc);
}

static void
membership_reconcile(samsa_consumer_t *c)
{
    samsa_coordinator_t     *g = &c->grp;
    samsa_membership_tp_t   *added, *revoked;
    int32_t             nadded, nrevoked, i;
    bool                need_md;

    if (!samsa_membership_reconcile(&g->k848, membership_resolve, c, &added, &nadded,
                               &revoked, &nrevoked, &need_md)) {
        if (need_md) {
            samsa_consumer_md_request(c);
        }
        return;
    }
    if (need_md) {
        samsa_consumer_md_request(c);
    }
    samsa_membership_tps_free(g->k848_added, g->nk848_added);
    g->k848_added = added;
    g->nk848_added = nadded;
    if (nrevoked == 0) {
        samsa_membership_tps_free(revoked, nrevoked);
        membership_assign_added(c);
        return;
    }
    /* stop fetching what goes; the app commits (auto-commit), runs
       REVOKED and drops them, then event_done() assigns the rest */
    for (i = 0; i < nrevoked; i++) {
        samsa_cpart_t  *p = samsa_consumer_part_find(
            c, revoked[i].topic, strlen(revoked[i].topic),
            revoked[i].partition);

        if (p != NULL) {
            p->paused = true;
        }
    }
    samsa_coordinator_push(c, SAMSA_CEVENT_REVOKE, membership_tps(revoked, nrevoked),
                      (size_t) nrevoked, true);
    samsa_membership_tps_free(revoked, nrevoked);
}

/* ---- ConsumerGroupHeartbeat --------------------------------------------- */

static void
membership_on_heartbeat(void *ctx, int32_t node, samsa_err_t err,
                   samsa_rd_t *body, void *opaque)
{
    samsa_consumer_t                         *c = ctx;
    samsa_coordinator_t                           *g = &c->grp;
    samsa_ConsumerGroupHeartbeatResponse_t    resp;
    samsa_membership_hbresp_t                      r;
    samsa_membership_topic_t                      *topics = NULL;
    samsa_arena_t                             arena = SAMSA_ARENA_INIT;
    samsa_membership_act_t                         act;
    samsa_cop_t                              *op;
    char                                      mid[SAMSA_MEMBERSHIP_MEMBER_ID_MAX];
    int32_t                                   i;

    (void) node;
    pthread_mutex_lock(&c->lock);
    memset(&r, 0, sizeof(r));
    if (err == SAMSA_ERR_NONE) {
        err = samsa_ConsumerGroupHeartbeatResponse_decode(
            body, (int16_t) (intptr_t) opaque, &arena, &resp);
    }
    if (err == SAMSA_ERR_NONE) {
        err = (samsa_err_t) resp.ErrorCode;
        if (err != SAMSA_ERR_NONE && resp.ErrorMessage.ptr != NULL) {
            samsa_debug("consumer: ConsumerGroupHeartbeat: %s: %.*s",
                        samsa_err_name(err), (int) resp.ErrorMessage.len,
                        resp.ErrorMessage.ptr);
        }
    }
    r.err = err;
    if (err == SAMSA_ERR_NONE) {
        if (resp.MemberId.ptr != NULL && resp.MemberId.len < sizeof(mid)) {
            memcpy(mid, resp.MemberId.ptr, resp.MemberId.len);
            mid[resp.MemberId.len] = '\0';
            r.member_id = mid;
            g->k848_id_from_coord = (intptr_t) opaque == 0;
        }
        r.epoch = resp.MemberEpoch;
        r.interval_ms = resp.HeartbeatIntervalMs;
        r.has_assignment = !resp.Assignment_null;
        if (r.has_assignment) {
            const samsa_CGHeartbeatAssignment_t  *a = &resp.Assignment;

            topics = samsa_calloc((size_t) a->TopicPartitions_cnt + 1,
                                  sizeof(*topics));
            for (i = 0; i < a->TopicPartitions_cnt; i++) {
                topics[i].id = a->TopicPartitions[i].TopicId;
                topics[i].parts = a->TopicPartitions[i].Partitions;
                topics[i].nparts = a->TopicPartitions[i].Partitions_cnt;
            }
            r.topics = topics;
            r.ntopics = a->TopicPartitions_cnt > 0
                            ? a->TopicPartitions_cnt : 0;
        }
    }
    act = samsa_membership_hb_result(&g->k848, samsa_now_ms(),
                                c->cc.net.retry_backoff_ms, &r);
    samsa_free(topics);         /* parts were the arena's, copied */
    switch (act) {
    case SAMSA_MEMBERSHIP_ACT_LOST: {
        samsa_warn("consumer: ConsumerGroupHeartbeat: %s: partitions "
                   "lost, rejoining group %s", samsa_err_name(err),
                   c->cc.group_id);
        samsa_membership_tps_free(g->k848_added, g->nk848_added);
        g->k848_added = NULL;
        g->nk848_added = 0;
        samsa_coordinator_push(c, SAMSA_CEVENT_LOST,
                          membership_tps(g->k848.owned, g->k848.nowned),
                          (size_t) g->k848.nowned, true);
        break;
    }
    case SAMSA_MEMBERSHIP_ACT_COORD:
        samsa_coordinator_coord_dead(c, err);
        break;
    case SAMSA_MEMBERSHIP_ACT_LEFT:
        samsa_info("consumer: member %s left group %s", g->k848.member_id,
                   c->cc.group_id);
        op = g->k848_leave_op;
        g->k848_leave_op = NULL;
        if (op != NULL) {
            samsa_consumer_op_done(c, op, err);
        }
        break;
    default:
        break;
    }
    membership_mirror(c);
    samsa_netclient_wakeup(c->nc);
    samsa_arena_fini(&arena);
    pthread_mutex_unlock(&c->lock);
}

static void
membership_heartbeat(samsa_consumer_t *c, int64_t now)
{
    samsa_coordinator_t                          *g = &c->grp;
    samsa_membership_t                           *sm = &g->k848;
    samsa_ConsumerGroupHeartbeatRequest_t    req;
    samsa_CGHeartbeatOwned_t                *owned = NULL;
    samsa_slice_t                           *names = NULL;
    samsa_membership_hbreq_t                      hr;
    samsa_buf_t                              frame = SAMSA_BUF_INIT;
    samsa_wr_t                               wr;
    const char                             **topics;
    const char                              *regex;
    int32_t                                  n, i;
    int16_t                                  v;

    v = samsa_coordinator_version(c, SAMSA_API_ConsumerGroupHeartbeat, 0, 1);
    if (v < 0) {
        if (samsa_netclient_connected(c->nc, c->grp.coord_node)) {
            samsa_coordinator_fatal(c, SAMSA_ERR_UNSUPPORTED_VERSION,
                               "ConsumerGroupHeartbeat (the coordinator "
                               "does not support group.protocol=consumer)");
        }
        return;
    }
    if (sm->state == SAMSA_MEMBERSHIP_JOINING
        && samsa_mdcache_gen(c->mdc) == 0) {
        samsa_consumer_md_request(c);   /* know the topics first */
        return;
    }
    topics = samsa_consumer_sub_topics(c, &n);
    /* v1: the coordinator resolves the pattern (SubscribedTopicRegex,
       POSIX extended, whole names, internal topics left out, as
       subscribe_pattern() here); v0 or internal topics wanted: the
       client resolves it and sends the names (Java's subscribe(Pattern)) */
    regex = v >= 1 && c->sub_mode == SAMSA_CSUB_PATTERN
                    && c->cc.exclude_internal_topics
                ? c->sub_re_src : NULL;
    samsa_membership_hb_build(sm, now, topics, n, regex, c->cc.group_instance_id,
                         c->cc.client_rack[0] != '\0' ? c->cc.client_rack
                                                      : NULL,
                         c->cc.max_poll_interval_ms,
                         c->cc.group_remote_assignor, &hr);
    samsa_ConsumerGroupHeartbeatRequest_init(&req);
    req.GroupId = samsa_slice_cstr(c->cc.group_id);
    /* v0: the coordinator gives the id at the first join (KIP-848);
       v1: the member's own (KIP-1082) */
    req.MemberId = samsa_slice_cstr(v == 0 && hr.epoch == 0
                                        && !g->k848_id_from_coord
                                        ? "" : hr.member_id);
    req.MemberEpoch = hr.epoch;
    req.InstanceId = hr.instance_id != NULL
                         ? samsa_slice_cstr(hr.instance_id)
                         : SAMSA_SLICE_NULL;
    req.RackId = hr.rack_id != NULL ? samsa_slice_cstr(hr.rack_id)
                                    : SAMSA_SLICE_NULL;
    req.RebalanceTimeoutMs = hr.rebalance_timeout_ms;
    if (!hr.topics_null) {
        names = samsa_calloc((size_t) hr.ntopics + 1, sizeof(*names));
        for (i = 0; i < hr.ntopics; i++) {
            names[i] = samsa_slice_cstr(hr.topics[i]);
        }
        req.SubscribedTopicNames = names;
        req.SubscribedTopicNames_cnt = hr.ntopics;
    }
    req.SubscribedTopicRegex = hr.regex != NULL
                                   ? samsa_slice_cstr(hr.regex)
                                   : SAMSA_SLICE_NULL;
    req.ServerAssignor = hr.server_assignor != NULL
                             ? samsa_slice_cstr(hr.server_assignor)
                             : SAMSA_SLICE_NULL;
    if (!hr.owned_null) {
        owned = samsa_calloc((size_t) hr.nowned + 1, sizeof(*owned));
        for (i = 0; i < hr.nowned; i++) {
            samsa_CGHeartbeatOwned_init(&owned[i]);
            owned[i].TopicId = hr.owned[i].id;
            owned[i].Partitions = hr.owned[i].parts;
            owned[i].Partitions_cnt = hr.owned[i].nparts;
        }
        req.TopicPartitions = owned;
        req.TopicPartitions_cnt = hr.nowned;
    }
    samsa_netclient_frame_begin(c->nc, SAMSA_API_ConsumerGroupHeartbeat, v,
                                &frame, &wr);
    samsa_ConsumerGroupHeartbeatRequest_encode(&wr, v, &req);
    samsa_free(names);
    samsa_free(owned);
    samsa_free(topics);
    if (hr.epoch == 0 && g->join_start_ns == 0) {
        g->join_start_ns = samsa_now_ns();
    }
    if (!samsa_coordinator_send(c, &frame, SAMSA_API_ConsumerGroupHeartbeat, v,
                           membership_on_heartbeat, (void *) (intptr_t) v, now)) {
        bool  leaving = sm->state == SAMSA_MEMBERSHIP_LEAVING;

        samsa_membership_hb_failed(sm, now, c->cc.net.retry_backoff_ms);
        if (leaving && g->k848_leave_op != NULL) {
            samsa_cop_t  *op = g->k848_leave_op;

            g->k848_leave_op = NULL;
            samsa_membership_reset(sm);
            samsa_consumer_op_done(c, op, SAMSA_ERR__STATE);
        }
    }
}

/* ---- the membership interface ------------------------------------------- */

static void
membership_join(samsa_consumer_t *c)
{
    membership_ensure_id(c);
    c->grp.k848_left = false;
    samsa_membership_sub_changed(&c->grp.k848);  /* joins when not a member */
    membership_mirror(c);
}

/* max.poll.interval.ms: leave (the partitions are lost); the next poll()
 * joins again (Java). */
static void
membership_poll_timeout(samsa_consumer_t *c, int64_t now)
{
    samsa_coordinator_t  *g = &c->grp;
    samsa_membership_t   *sm = &g->k848;

    if (sm->state != SAMSA_MEMBERSHIP_STABLE
        || !samsa_coordinator_poll_overdue(c, now)) {
        return;
    }
    if (sm->nowned > 0) {
        samsa_coordinator_push(c, SAMSA_CEVENT_LOST,
                          membership_tps(sm->owned, sm->nowned),
                          (size_t) sm->nowned, false);
    }
    (void) samsa_membership_leave(sm);
}

static void
membership_step(samsa_consumer_t *c, int64_t now)
{
    samsa_coordinator_t  *g = &c->grp;
    samsa_membership_t   *sm = &g->k848;

    membership_ensure_id(c);
    if (sm->state == SAMSA_MEMBERSHIP_UNSUBSCRIBED && membership_subscribed(c)
        && !g->k848_left
        && now - c->last_poll_ms <= c->cc.max_poll_interval_ms) {
        samsa_membership_join(sm);       /* after a poll timeout: poll() again */
    }
    membership_reconcile(c);
    membership_poll_timeout(c, now);
    if (samsa_membership_hb_due(sm, now)) {
        membership_heartbeat(c, now);
    }
    membership_mirror(c);
}

static void
membership_md_changed(samsa_consumer_t *c)
{
    /* unknown topic ids may be known now, a pattern may match other
       topics: the next step reconciles, the next heartbeat sends a
       changed subscription */
    samsa_netclient_wakeup(c->nc);
}

static bool
membership_leave(samsa_consumer_t *c, samsa_cop_t *op, int64_t now)
{
    samsa_coordinator_t  *g = &c->grp;

    (void) now;
    g->k848_left = true;
    if (g->k848_leave_op != NULL || !samsa_membership_leave(&g->k848)) {
        membership_mirror(c);
        return false;
    }
    g->k848_leave_op = op;
    samsa_info("consumer: member %s leaving group %s (epoch %d)",
               g->k848.member_id, c->cc.group_id,
               g->k848.is_static ? SAMSA_MEMBERSHIP_LEAVE_STATIC_EPOCH
                                 : SAMSA_MEMBERSHIP_LEAVE_EPOCH);
    membership_step(c, samsa_now_ms());
    return true;
}

static void
membership_event_done(samsa_consumer_t *c, const samsa_cevent_t *ev)
{
    samsa_coordinator_t  *g = &c->grp;

    if (!ev->rejoin) {
        return;
    }
    if (ev->kind == SAMSA_CEVENT_REVOKE
        && g->k848.state == SAMSA_MEMBERSHIP_RECONCILING) {
        membership_assign_added(c);
    } else if (ev->kind == SAMSA_CEVENT_LOST) {
        samsa_membership_lost_done(&g->k848);
    }
    membership_mirror(c);
    samsa_netclient_wakeup(c->nc);
}

static void
membership_reset(samsa_consumer_t *c)
{
    samsa_coordinator_t  *g = &c->grp;

    samsa_membership_reset(&g->k848);
    samsa_membership_tps_free(g->k848_added, g->nk848_added);
    g->k848_added = NULL;
    g->nk848_added = 0;
    membership_mirror(c);
}

const samsa_group_protocol_t  samsa_group_protocol_consumer = {
    .name = "consumer",
    .join = membership_join,
    .step = membership_step,
    .md_changed = membership_md_changed,
    .leave = membership_leave,
    .event_done = membership_event_done,
    .reset = membership_reset,
};
