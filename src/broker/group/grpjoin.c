/*
 * broker/group/grpjoin.c - the classic rebalance protocol, as Kafka's
 * GroupCoordinator runs it: JoinGroup (KIP-394 member ids, static members
 * of KIP-345, protocol selection), the rebalance timer (DelayedJoin, and
 * InitialDelayedJoin for group.initial.rebalance.delay.ms), SyncGroup,
 * Heartbeat with session timers (DelayedHeartbeat), LeaveGroup.
 *
 * Threads: handlers and the two reapers; everything here runs with the
 * group's lock held (it is recursive, and the lock every delayed op of the
 * group runs under, so arming a timer from inside a callback is fine).
 * Ownership: the group owns its members; a delayed op holds a group ref;
 * members and groups point at their current op without a ref (cleared in
 * the op's on_complete, which always runs before its memory goes).
 */
#include "broker/group/grp_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "util/alloc.h"
#include "util/diag.h"

/* Session timer of one member (Kafka's DelayedHeartbeat); a new member's
 * first join is timed by one too, armed with the new-member join timeout. */
struct grp_hb_op {
    grp_timer_t         t;              /* with the member's id */
    int64_t             timeout_ms;     /* what it was armed with */
};

/* Rebalance timer (Kafka's DelayedJoin / InitialDelayedJoin). */
struct grp_join_op {
    grp_timer_t         t;
    bool                initial;
    int64_t             remaining_ms;   /* initial: what is left after it */
};

/* Sync timer (Kafka's DelayedSync): members of the generation that did
 * not send SyncGroup within the rebalance timeout are removed. */
typedef struct grp_sync_op {
    grp_timer_t         t;
    int32_t             generation;
} grp_sync_op_t;

static void grp_remove_member(samsa_grp_t *g, grp_member_t *m);
static void grp_complete_join(samsa_grp_t *g);
static void grp_try_complete_join(samsa_grp_t *g);

/* ---- a group's timers -------------------------------------------------- */

void *
samsa_grp_timer_new(size_t size, const samsa_delayed_op_ops_t *ops,
                    samsa_grp_t *g, const char *member_id, int64_t delay_ms)
{
    grp_timer_t  *t = samsa_calloc(1, size);

    samsa_delayed_op_init(&t->op, ops, delay_ms, &g->lock);
    samsa_grp_ref(g);
    t->grp = g;
    t->member_id = member_id != NULL ? samsa_strdup(member_id) : NULL;
    return t;
}

void *
samsa_grp_member_timer_new(size_t size, const samsa_delayed_op_ops_t *ops,
                           samsa_grp_t *g, const char *member_id,
                           int64_t delay_ms)
{
    if (atomic_load(&g->gc->stopping)) {
        return NULL;
    }
    return samsa_grp_timer_new(size, ops, g, member_id, delay_ms);
}

void
samsa_grp_timer_watch(grp_timer_t *t, samsa_purgatory_t *purg)
{
    samsa_purgatory_try_complete_else_watch(purg, &t->op, NULL, 0);
    samsa_delayed_op_unref(&t->op);
}

void
samsa_grp_timer_complete(grp_timer_t *t)
{
    samsa_delayed_op_ref(&t->op);
    samsa_delayed_op_force_complete(&t->op);
    samsa_delayed_op_unref(&t->op);
}

bool
samsa_grp_timer_never_ready(samsa_delayed_op_t *op)
{
    (void) op;
    return false;
}

void
samsa_grp_timer_on_expire(samsa_delayed_op_t *op)
{
    ((grp_timer_t *) op)->expired = true;
}

void
samsa_grp_timer_free(samsa_delayed_op_t *op)
{
    grp_timer_t  *t = (grp_timer_t *) op;

    samsa_free(t->member_id);
    samsa_grp_unref(t->grp);
    samsa_free(t);
}

/* ---- members ------------------------------------------------------------ */

/* The index of the member with id (len bytes) in list, or n. */
static size_t
grp_member_index(grp_member_t *const *list, size_t n, const char *id,
                 size_t len)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        if (strlen(list[i]->member_id) == len
            && memcmp(list[i]->member_id, id, len) == 0) {
            break;
        }
    }
    return i;
}

grp_member_t *
samsa_grp_member_find(samsa_grp_t *g, const char *id, size_t len)
{
    size_t  i = grp_member_index(g->members, g->nmembers, id, len);

    return i < g->nmembers ? g->members[i] : NULL;
}

static grp_member_t *
grp_pending_find(samsa_grp_t *g, const char *id, size_t len, size_t *at)
{
    size_t  i = grp_member_index(g->pending, g->npending, id, len);

    if (i == g->npending) {
        return NULL;
    }
    *at = i;
    return g->pending[i];
}

grp_member_t *
samsa_grp_static_find(samsa_grp_t *g, samsa_slice_t instance_id)
{
    size_t  i;

    for (i = 0; i < g->nmembers; i++) {
        if (g->members[i]->instance_id != NULL
            && samsa_slice_eq_cstr(instance_id, g->members[i]->instance_id)) {
            return g->members[i];
        }
    }
    return NULL;
}

/* Kafka's isStaticMemberFenced: the instance id belongs to another
 * member id. */
static bool
grp_is_fenced(samsa_grp_t *g, samsa_slice_t instance_id,
              samsa_slice_t member_id)
{
    grp_member_t  *m;

    if (instance_id.ptr == NULL) {
        return false;
    }
    m = samsa_grp_static_find(g, instance_id);
    return m != NULL && !samsa_slice_eq_cstr(member_id, m->member_id);
}

static void
grp_protos_free(grp_member_t *m)
{
    size_t  i;

    for (i = 0; i < m->nprotos; i++) {
        samsa_free(m->protos[i].name);
        samsa_free(m->protos[i].metadata);
    }
    samsa_free(m->protos);
    m->protos = NULL;
    m->nprotos = 0;
}

static void
grp_protos_set(grp_member_t *m, const samsa_grp_protocol_t *p, size_t n)
{
    size_t  i;

    grp_protos_free(m);
    m->protos = samsa_calloc(n + 1, sizeof(*m->protos));
    m->nprotos = n;
    for (i = 0; i < n; i++) {
        m->protos[i].name = samsa_strndup(p[i].name.ptr, p[i].name.len);
        m->protos[i].metadata = samsa_malloc(p[i].metadata.len + 1);
        if (p[i].metadata.len > 0) {
            memcpy(m->protos[i].metadata, p[i].metadata.ptr,
                   p[i].metadata.len);
        }
        m->protos[i].metadata_len = p[i].metadata.len;
    }
}

grp_member_t *
samsa_grp_member_new(char *member_id, samsa_slice_t instance_id,
                     samsa_slice_t client_id, samsa_slice_t client_host,
                     int32_t session_timeout_ms, int32_t rebalance_timeout_ms)
{
    grp_member_t  *m = samsa_calloc(1, sizeof(*m));

    m->member_id = member_id;
    m->instance_id = instance_id.ptr != NULL
                         ? samsa_strndup(instance_id.ptr, instance_id.len)
                         : NULL;
    m->client_id = samsa_strndup(client_id.ptr, client_id.len);
    m->client_host = samsa_strndup(client_host.ptr, client_host.len);
    m->session_timeout_ms = session_timeout_ms;
    m->rebalance_timeout_ms = rebalance_timeout_ms;
    return m;
}

void
samsa_grp_member_free(grp_member_t *m)
{
    if (m == NULL) {
        return;
    }
    grp_protos_free(m);
    samsa_free(m->member_id);
    samsa_free(m->instance_id);
    samsa_free(m->client_id);
    samsa_free(m->client_host);
    samsa_free(m->assignment);
    samsa_free(m);
}

static void
grp_member_set_assignment(grp_member_t *m, const void *p, size_t len)
{
    samsa_free(m->assignment);
    m->assignment = samsa_malloc(len + 1);
    if (len > 0) {
        memcpy(m->assignment, p, len);
    }
    m->assignment_len = len;
}

/* The member's metadata for the protocol name (NULL if it has none). */
static const grp_proto_t *
grp_member_proto(const grp_member_t *m, const char *name)
{
    size_t  i;

    for (i = 0; name != NULL && i < m->nprotos; i++) {
        if (strcmp(m->protos[i].name, name) == 0) {
            return &m->protos[i];
        }
    }
    return NULL;
}

/* Kafka's MemberMetadata.matches: the same protocols, in order. */
static bool
grp_member_matches(const grp_member_t *m, const samsa_grp_protocol_t *p,
                   size_t n)
{
    size_t  i;

    if (m->nprotos != n) {
        return false;
    }
    for (i = 0; i < n; i++) {
        if (!samsa_slice_eq_cstr(p[i].name, m->protos[i].name)
            || p[i].metadata.len != m->protos[i].metadata_len
            || (p[i].metadata.len > 0
                && memcmp(p[i].metadata.ptr, m->protos[i].metadata,
                          p[i].metadata.len) != 0)) {
            return false;
        }
    }
    return true;
}

void
samsa_grp_random_bytes(uint8_t *u, size_t n)
{
    size_t  i;

    if (getrandom(u, n, 0) != (ssize_t) n) {
        for (i = 0; i < n; i++) {
            u[i] = (uint8_t) random();
        }
    }
}

/* clientId + "-" + a random UUID, as Kafka names members. */
static char *
grp_new_member_id(samsa_slice_t client_id)
{
    uint8_t  u[16];
    char    *out = samsa_malloc(client_id.len + 38);
    size_t   i, n;

    samsa_grp_random_bytes(u, sizeof(u));
    u[6] = (uint8_t) ((u[6] & 0x0f) | 0x40);
    u[8] = (uint8_t) ((u[8] & 0x3f) | 0x80);
    if (client_id.len > 0) {
        memcpy(out, client_id.ptr, client_id.len);
    }
    n = client_id.len;
    out[n++] = '-';
    for (i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) {
            out[n++] = '-';
        }
        n += (size_t) sprintf(out + n, "%02x", u[i]);
    }
    out[n] = '\0';
    return out;
}

/* ---- session timers (DelayedHeartbeat) ------------------------------------ */

/* Kafka's ClassicGroupMember.hasSatisfiedHeartbeat: a member waiting for
 * a join or a sync is alive whatever its heartbeats, unless it is new (it
 * has never completed a join): that one's timer, armed with the new-member
 * join timeout when it was added, expires it even while it waits. */
bool
samsa_grp_member_keep_alive(const grp_member_t *m)
{
    return !m->is_new && (m->join_cb != NULL || m->sync_cb != NULL);
}

static void
grp_hb_on_complete(samsa_delayed_op_t *op)
{
    grp_hb_op_t   *h = (grp_hb_op_t *) op;
    samsa_grp_t   *g = h->t.grp;
    grp_member_t  *m;
    size_t         at = 0, len = strlen(h->t.member_id);

    m = samsa_grp_member_find(g, h->t.member_id, len);
    if (m == NULL) {
        m = grp_pending_find(g, h->t.member_id, len, &at);
    }
    if (m == NULL || m->hb != h) {
        return;
    }
    m->hb = NULL;
    if (!h->t.expired || atomic_load(&g->gc->stopping)
        || samsa_grp_member_keep_alive(m)) {
        return;
    }
    if (m->is_new && m->join_cb != NULL) {
        samsa_info("group %s: new member %s did not complete its join "
                   "within %d ms: removing it", g->id, m->member_id,
                   (int) h->timeout_ms);
    } else {
        samsa_info("group %s: member %s has no heartbeat for %d ms: "
                   "removing it", g->id, m->member_id, (int) h->timeout_ms);
    }
    if (m->is_pending) {
        g->pending[at] = g->pending[--g->npending];
        samsa_grp_member_free(m);
        grp_try_complete_join(g);
        return;
    }
    grp_remove_member(g, m);
}

static const samsa_delayed_op_ops_t  grp_hb_ops = {
    .try_complete = samsa_grp_timer_never_ready,   /* the next heartbeat
                                                      completes it */
    .on_complete = grp_hb_on_complete,
    .on_expire = samsa_grp_timer_on_expire,
    .free = samsa_grp_timer_free,
};

static void
grp_member_stop_timer(grp_member_t *m)
{
    grp_hb_op_t  *old = m->hb;

    if (old == NULL) {
        return;
    }
    samsa_grp_timer_complete(&old->t);
    m->hb = NULL;
}

/* Kafka's rescheduleClassicGroupMemberHeartbeat (completeAndSchedule-
 * NextExpiration): m's timer now runs timeout_ms from now. */
static void
grp_member_schedule(samsa_grp_t *g, grp_member_t *m, int64_t timeout_ms)
{
    grp_hb_op_t  *h;

    grp_member_stop_timer(m);
    h = samsa_grp_member_timer_new(sizeof(*h), &grp_hb_ops, g, m->member_id,
                                   timeout_ms);
    if (h != NULL) {
        h->timeout_ms = timeout_ms;
        m->hb = h;
        samsa_grp_timer_watch(&h->t, g->gc->heartbeat);
    }
}

/* Kafka's completeAndScheduleNextHeartbeatExpiration: the session timer. */
void
samsa_grp_member_touch(samsa_grp_t *g, grp_member_t *m)
{
    grp_member_schedule(g, m, m->session_timeout_ms);
}

/* ---- rebalance timers (DelayedJoin, InitialDelayedJoin) ------------------ */

/* Kafka's hasAllMembersJoined. */
static bool
grp_all_joined(const samsa_grp_t *g)
{
    size_t  i;

    if (g->npending > 0) {
        return false;
    }
    for (i = 0; i < g->nmembers; i++) {
        if (g->members[i]->join_cb == NULL) {
            return false;
        }
    }
    return true;
}

static void grp_schedule_join(samsa_grp_t *g, bool initial, int64_t delay_ms,
                              int64_t remaining_ms);

static bool
grp_join_try_complete(samsa_delayed_op_t *op)
{
    grp_join_op_t  *j = (grp_join_op_t *) op;

    if (!j->initial && grp_all_joined(j->t.grp)) {
        return samsa_delayed_op_force_complete(op);
    }
    return false;
}

static void
grp_join_on_complete(samsa_delayed_op_t *op)
{
    grp_join_op_t  *j = (grp_join_op_t *) op;
    samsa_grp_t    *g = j->t.grp;
    int64_t         delay;

    if (g->join_op == j) {
        g->join_op = NULL;
    }
    if (atomic_load(&g->gc->stopping)
        || g->state != SAMSA_GRP_PREPARING_REBALANCE) {
        return;
    }
    if (j->initial && g->new_member_added && j->remaining_ms > 0) {
        /* InitialDelayedJoin: members still arrive; wait once more. */
        g->new_member_added = false;
        delay = g->gc->initial_rebalance_delay_ms;
        if (delay > j->remaining_ms) {
            delay = j->remaining_ms;
        }
        grp_schedule_join(g, true, delay, j->remaining_ms - delay);
        return;
    }
    grp_complete_join(g);
}

static const samsa_delayed_op_ops_t  grp_join_ops = {
    .try_complete = grp_join_try_complete,
    .on_complete = grp_join_on_complete,
    .on_expire = NULL,
    .free = samsa_grp_timer_free,
};

static void
grp_schedule_join(samsa_grp_t *g, bool initial, int64_t delay_ms,
                  int64_t remaining_ms)
{
    grp_join_op_t  *j = samsa_grp_timer_new(sizeof(*j), &grp_join_ops, g,
                                            NULL, delay_ms);

    j->initial = initial;
    j->remaining_ms = remaining_ms;
    g->join_op = j;
    samsa_grp_timer_watch(&j->t, g->gc->rebalance);
}

/* ---- DelayedSync ------------------------------------------------------- */

static bool
grp_all_synced(const samsa_grp_t *g)
{
    size_t  i;

    for (i = 0; i < g->nmembers; i++) {
        if (g->members[i]->pending_sync) {
            return false;
        }
    }
    return true;
}

static bool
grp_sync_try_complete(samsa_delayed_op_t *op)
{
    grp_sync_op_t  *so = (grp_sync_op_t *) op;

    if (so->generation != so->t.grp->generation || grp_all_synced(so->t.grp)) {
        return samsa_delayed_op_force_complete(op);
    }
    return false;
}

/* Kafka's onExpirePendingSync: remove the members that still owe a
 * SyncGroup (each removal may start a rebalance). */
static void
grp_sync_on_complete(samsa_delayed_op_t *op)
{
    grp_sync_op_t  *so = (grp_sync_op_t *) op;
    samsa_grp_t    *g = so->t.grp;
    char          **ids;
    grp_member_t   *m;
    size_t          i, n = 0;

    if (g->sync_op == so) {
        g->sync_op = NULL;
    }
    if (atomic_load(&g->gc->stopping) || so->generation != g->generation
        || (g->state != SAMSA_GRP_COMPLETING_REBALANCE
            && g->state != SAMSA_GRP_STABLE)) {
        return;
    }
    ids = samsa_calloc(g->nmembers + 1, sizeof(*ids));
    for (i = 0; i < g->nmembers; i++) {
        if (g->members[i]->pending_sync) {
            ids[n++] = samsa_strdup(g->members[i]->member_id);
        }
    }
    for (i = 0; i < n; i++) {
        m = samsa_grp_member_find(g, ids[i], strlen(ids[i]));
        if (m != NULL && m->pending_sync) {
            samsa_info("group %s: member %s did not sync within the "
                       "rebalance timeout; removing it", g->id, ids[i]);
            grp_remove_member(g, m);
        }
        samsa_free(ids[i]);
    }
    samsa_free(ids);
}

static const samsa_delayed_op_ops_t  grp_sync_ops = {
    .try_complete = grp_sync_try_complete,
    .on_complete = grp_sync_on_complete,
    .on_expire = NULL,
    .free = samsa_grp_timer_free,
};

/* Every member owes a SyncGroup for the new generation; arm the timer. */
static void
grp_schedule_sync(samsa_grp_t *g, int64_t delay_ms)
{
    grp_sync_op_t  *so;
    size_t          i;

    for (i = 0; i < g->nmembers; i++) {
        g->members[i]->pending_sync = true;
    }
    so = samsa_grp_timer_new(sizeof(*so), &grp_sync_ops, g, NULL, delay_ms);
    so->generation = g->generation;
    g->sync_op = so;
    samsa_grp_timer_watch(&so->t, g->gc->rebalance);
}

static bool
grp_has_member(const samsa_grp_t *g, const grp_member_t *m)
{
    size_t  i;

    for (i = 0; i < g->nmembers; i++) {
        if (g->members[i] == m) {
            return true;
        }
    }
    return false;
}

/* A member synced: complete the timer once nobody owes one. */
static void
grp_member_synced(samsa_grp_t *g, grp_member_t *m)
{
    grp_sync_op_t  *so = g->sync_op;

    m->pending_sync = false;
    if (so == NULL || !grp_all_synced(g)) {
        return;
    }
    samsa_grp_timer_complete(&so->t);
}

/* Kafka's rebalancePurgatory.checkAndComplete(group). */
static void
grp_try_complete_join(samsa_grp_t *g)
{
    grp_join_op_t  *j = g->join_op;

    if (j == NULL || j->initial || !grp_all_joined(g)) {
        return;
    }
    samsa_grp_timer_complete(&j->t);
}

/* ---- answering ------------------------------------------------------------ */

static void
grp_join_answer_error(samsa_grp_join_cb_t *cb, void *ctx, samsa_err_t err,
                      const char *member_id)
{
    samsa_grp_join_result_t  res = {
        .error = err, .generation = -1, .leader_id = "",
        .member_id = member_id != NULL ? member_id : "",
    };

    cb(ctx, &res);
}

static void
grp_sync_answer(grp_member_t *m, samsa_grp_t *g, samsa_err_t err)
{
    samsa_grp_sync_result_t  res = { .error = err };
    samsa_grp_sync_cb_t     *cb = m->sync_cb;

    if (cb == NULL) {
        return;
    }
    if (err == SAMSA_ERR_NONE) {
        res.protocol_type = g->protocol_type;
        res.protocol_name = g->protocol_name;
        res.assignment = m->assignment;
        res.assignment_len = m->assignment_len;
    }
    m->sync_cb = NULL;
    cb(m->sync_ctx, &res);
}

static void
grp_join_answer_member_error(grp_member_t *m, samsa_err_t err)
{
    samsa_grp_join_cb_t  *cb = m->join_cb;

    if (cb != NULL) {
        m->join_cb = NULL;
        grp_join_answer_error(cb, m->join_ctx, err, m->member_id);
    }
}

/* The members' metadata for the selected protocol (the leader's list). */
static samsa_grp_member_meta_t *
grp_member_metas(samsa_grp_t *g)
{
    samsa_grp_member_meta_t  *mm = samsa_calloc(g->nmembers + 1,
                                                sizeof(*mm));
    const grp_proto_t        *p;
    size_t                    i;

    for (i = 0; i < g->nmembers; i++) {
        p = grp_member_proto(g->members[i], g->protocol_name);
        mm[i].member_id = g->members[i]->member_id;
        mm[i].instance_id = g->members[i]->instance_id;
        mm[i].metadata = p != NULL ? p->metadata : (const uint8_t *) "";
        mm[i].metadata_len = p != NULL ? p->metadata_len : 0;
    }
    return mm;
}

/* Answer m's join from the current generation (no rebalance needed). */
static void
grp_join_answer_current(samsa_grp_t *g, grp_member_t *m,
                        samsa_grp_join_cb_t *cb, void *ctx, bool skip)
{
    samsa_grp_join_result_t   res = {
        .error = SAMSA_ERR_NONE, .generation = g->generation,
        .protocol_type = g->protocol_type,
        .protocol_name = g->protocol_name,
        .leader_id = g->leader_id != NULL ? g->leader_id : "",
        .member_id = m->member_id,
    };
    samsa_grp_member_meta_t  *mm = NULL;
    bool                      leader = g->leader_id != NULL
                                       && strcmp(g->leader_id,
                                                 m->member_id) == 0;

    if (leader) {
        mm = grp_member_metas(g);
        res.members = mm;
        res.nmembers = g->nmembers;
        res.skip_assignment = skip;
    }
    cb(ctx, &res);
    samsa_free(mm);
}

/* Kafka's propagateAssignment: answer every waiting sync. */
static void
grp_propagate_assignment(samsa_grp_t *g, samsa_err_t err)
{
    size_t  i;

    for (i = 0; i < g->nmembers; i++) {
        if (g->members[i]->sync_cb != NULL) {
            grp_sync_answer(g->members[i], g, err);
            samsa_grp_member_touch(g, g->members[i]);
        }
    }
}

/* Kafka's resetAndPropagateAssignmentError. */
static void
grp_reset_assignments(samsa_grp_t *g, samsa_err_t err)
{
    size_t  i;

    for (i = 0; i < g->nmembers; i++) {
        grp_member_set_assignment(g->members[i], NULL, 0);
    }
    grp_propagate_assignment(g, err);
}

void
samsa_grp_fail_waiting(samsa_grp_t *g, samsa_err_t err)
{
    size_t  i;

    for (i = 0; i < g->nmembers; i++) {
        grp_join_answer_member_error(g->members[i], err);
        grp_sync_answer(g->members[i], g, err);
    }
}

/* ---- the state machine ------------------------------------------------- */

static int32_t
grp_rebalance_timeout(const samsa_grp_t *g)
{
    int32_t  t = 0;
    size_t   i;

    for (i = 0; i < g->nmembers; i++) {
        if (g->members[i]->rebalance_timeout_ms > t) {
            t = g->members[i]->rebalance_timeout_ms;
        }
    }
    return t;
}

static void
grp_prepare_rebalance(samsa_grp_t *g)
{
    bool     initial = g->state == SAMSA_GRP_EMPTY;
    int64_t  rt = grp_rebalance_timeout(g);
    int64_t  delay = g->gc->initial_rebalance_delay_ms;

    if (g->state == SAMSA_GRP_COMPLETING_REBALANCE) {
        grp_reset_assignments(g, SAMSA_ERR_REBALANCE_IN_PROGRESS);
    }
    for (size_t i = 0; i < g->nmembers; i++) {
        g->members[i]->pending_sync = false;    /* Kafka clears them too */
    }
    samsa_grp_set_state(g, SAMSA_GRP_PREPARING_REBALANCE);
    samsa_info("group %s: preparing to rebalance (generation %d, %zu "
               "members)", g->id, (int) g->generation, g->nmembers);
    if (initial) {
        if (delay > rt) {
            delay = rt;
        }
        grp_schedule_join(g, true, delay, rt - delay > 0 ? rt - delay : 0);
    } else {
        grp_schedule_join(g, false, rt, 0);
    }
}

/* Kafka's maybePrepareRebalance: only from Empty, Stable and
 * CompletingRebalance. */
static void
grp_maybe_prepare_rebalance(samsa_grp_t *g)
{
    if (g->state == SAMSA_GRP_EMPTY || g->state == SAMSA_GRP_STABLE
        || g->state == SAMSA_GRP_COMPLETING_REBALANCE) {
        grp_prepare_rebalance(g);
    }
}

/* Kafka's GroupMetadata.selectProtocol: of the protocols every member
 * supports, the one most members list first (ties: the first member's
 * order). */
static const char *
grp_select_protocol(samsa_grp_t *g)
{
    const grp_member_t  *first = g->members[0];
    const char          *best = NULL;
    size_t               i, j, k, votes, best_votes = 0;
    bool                 all;

    for (i = 0; i < first->nprotos; i++) {
        all = true;
        for (j = 1; j < g->nmembers && all; j++) {
            all = grp_member_proto(g->members[j], first->protos[i].name)
                  != NULL;
        }
        if (!all) {
            continue;
        }
        votes = 0;
        for (j = 0; j < g->nmembers; j++) {
            /* the member's most preferred protocol that all support */
            for (k = 0; k < g->members[j]->nprotos; k++) {
                const char  *name = g->members[j]->protos[k].name;
                size_t       x;
                bool         ok = true;

                for (x = 0; x < g->nmembers && ok; x++) {
                    ok = grp_member_proto(g->members[x], name) != NULL;
                }
                if (ok) {
                    votes += strcmp(name, first->protos[i].name) == 0;
                    break;
                }
            }
        }
        if (best == NULL || votes > best_votes) {
            best = first->protos[i].name;
            best_votes = votes;
        }
    }
    return best;
}

/* Kafka's supportsProtocols. */
static bool
grp_supports(samsa_grp_t *g, samsa_slice_t type,
             const samsa_grp_protocol_t *p, size_t n)
{
    size_t  i, j;
    bool    all;

    if (n == 0 || type.len == 0) {
        return false;
    }
    if (g->nmembers == 0) {
        return true;
    }
    if (g->protocol_type == NULL || !samsa_slice_eq_cstr(type,
                                                         g->protocol_type)) {
        return false;
    }
    for (i = 0; i < n; i++) {
        all = true;
        for (j = 0; j < g->nmembers && all; j++) {
            all = false;
            for (size_t k = 0; k < g->members[j]->nprotos && !all; k++) {
                all = samsa_slice_eq_cstr(p[i].name,
                                          g->members[j]->protos[k].name);
            }
        }
        if (all) {
            return true;
        }
    }
    return false;
}

/* Kafka's onCompleteJoin. */
static void
grp_complete_join(samsa_grp_t *g)
{
    samsa_grp_member_meta_t  *mm;
    samsa_grp_join_result_t   res;
    samsa_grp_join_cb_t      *cb;
    grp_member_t             *m;
    size_t                    i;

    /* members that did not rejoin in time are out */
    for (i = 0; i < g->nmembers;) {
        m = g->members[i];
        if (m->join_cb != NULL) {
            i++;
            continue;
        }
        samsa_info("group %s: member %s did not rejoin in time", g->id,
                   m->member_id);
        grp_member_stop_timer(m);
        grp_sync_answer(m, g, SAMSA_ERR_REBALANCE_IN_PROGRESS);
        memmove(&g->members[i], &g->members[i + 1],
                (g->nmembers - i - 1) * sizeof(*g->members));
        g->nmembers--;
        samsa_grp_member_free(m);
    }
    if (g->state == SAMSA_GRP_DEAD) {
        return;
    }
    if (g->leader_id == NULL
        || samsa_grp_member_find(g, g->leader_id, strlen(g->leader_id))
               == NULL) {
        samsa_free(g->leader_id);
        g->leader_id = g->nmembers > 0
                           ? samsa_strdup(g->members[0]->member_id) : NULL;
    }
    g->generation++;
    samsa_free(g->protocol_name);
    g->protocol_name = NULL;
    if (g->nmembers == 0) {
        samsa_grp_set_state(g, SAMSA_GRP_EMPTY);
        if (samsa_grpstore_write_group(g) != SAMSA_ERR_NONE) {
            samsa_warn("group %s: cannot write its metadata", g->id);
        }
        return;
    }
    g->protocol_name = samsa_strdup(grp_select_protocol(g));
    samsa_grp_set_state(g, SAMSA_GRP_COMPLETING_REBALANCE);
    if (!atomic_load(&g->gc->stopping)) {
        grp_schedule_sync(g, grp_rebalance_timeout(g));
    }
    samsa_info("group %s: generation %d with %zu members, protocol %s, "
               "leader %s", g->id, (int) g->generation, g->nmembers,
               g->protocol_name, g->leader_id);
    mm = grp_member_metas(g);
    for (i = 0; i < g->nmembers; i++) {
        m = g->members[i];
        cb = m->join_cb;
        if (cb == NULL) {
            continue;
        }
        memset(&res, 0, sizeof(res));
        res.error = SAMSA_ERR_NONE;
        res.generation = g->generation;
        res.protocol_type = g->protocol_type;
        res.protocol_name = g->protocol_name;
        res.leader_id = g->leader_id;
        res.member_id = m->member_id;
        if (strcmp(g->leader_id, m->member_id) == 0) {
            res.members = mm;
            res.nmembers = g->nmembers;
        }
        m->join_cb = NULL;
        m->is_new = false;
        cb(m->join_ctx, &res);
        samsa_grp_member_touch(g, m);
    }
    samsa_free(mm);
}

/* Kafka's removeMemberAndUpdateGroup. */
static void
grp_remove_member(samsa_grp_t *g, grp_member_t *m)
{
    size_t  i;

    grp_join_answer_member_error(m, SAMSA_ERR_UNKNOWN_MEMBER_ID);
    grp_sync_answer(m, g, SAMSA_ERR_UNKNOWN_MEMBER_ID);
    grp_member_stop_timer(m);
    for (i = 0; i < g->nmembers && g->members[i] != m; i++) {
    }
    samsa_assert(i < g->nmembers);
    memmove(&g->members[i], &g->members[i + 1],
            (g->nmembers - i - 1) * sizeof(*g->members));
    g->nmembers--;
    if (g->leader_id != NULL && strcmp(g->leader_id, m->member_id) == 0) {
        samsa_free(g->leader_id);
        g->leader_id = g->nmembers > 0
                           ? samsa_strdup(g->members[0]->member_id) : NULL;
    }
    samsa_grp_member_free(m);
    switch (g->state) {
    case SAMSA_GRP_STABLE:
    case SAMSA_GRP_COMPLETING_REBALANCE:
        grp_maybe_prepare_rebalance(g);
        break;
    case SAMSA_GRP_PREPARING_REBALANCE:
        grp_try_complete_join(g);
        break;
    default:
        break;
    }
}

/* ---- JoinGroup ------------------------------------------------------------ */

static grp_member_t *
grp_member_new(const samsa_grp_join_req_t *rq, char *member_id)
{
    grp_member_t  *m;

    m = samsa_grp_member_new(member_id, rq->instance_id, rq->client_id,
                             rq->client_host, rq->session_timeout_ms,
                             rq->rebalance_timeout_ms >= 0
                                 ? rq->rebalance_timeout_ms
                                 : rq->session_timeout_ms);
    grp_protos_set(m, rq->protocols, rq->nprotocols);
    m->assignment = samsa_malloc(1);
    return m;
}

/* Kafka's updateMember: new protocols and timeouts, a new waiting join. */
static void
grp_member_update(grp_member_t *m, const samsa_grp_join_req_t *rq,
                  samsa_grp_join_cb_t *cb, void *ctx)
{
    /* An older join of the same member (another connection) gives way. */
    grp_join_answer_member_error(m, SAMSA_ERR_REBALANCE_IN_PROGRESS);
    grp_protos_set(m, rq->protocols, rq->nprotocols);
    m->session_timeout_ms = rq->session_timeout_ms;
    m->rebalance_timeout_ms = rq->rebalance_timeout_ms >= 0
                                  ? rq->rebalance_timeout_ms
                                  : rq->session_timeout_ms;
    m->join_cb = cb;
    m->join_ctx = ctx;
    m->join_skip_ok = rq->supports_skip_assignment;
}

static void
grp_add_member_and_rebalance(samsa_grp_t *g, const samsa_grp_join_req_t *rq,
                             char *member_id, samsa_grp_join_cb_t *cb,
                             void *ctx)
{
    grp_member_t  *m = grp_member_new(rq, member_id);
    grp_member_t  *p;
    size_t         at;

    m->is_new = true;
    m->join_cb = cb;
    m->join_ctx = ctx;
    m->join_skip_ok = rq->supports_skip_assignment;
    if (g->state == SAMSA_GRP_PREPARING_REBALANCE && g->generation == 0) {
        g->new_member_added = true;
    }
    if (g->nmembers == 0) {
        samsa_free(g->protocol_type);
        g->protocol_type = samsa_strndup(rq->protocol_type.ptr,
                                             rq->protocol_type.len);
    }
    g->members = samsa_realloc(g->members,
                               (g->nmembers + 1) * sizeof(*g->members));
    g->members[g->nmembers++] = m;
    if (g->leader_id == NULL) {
        g->leader_id = samsa_strdup(m->member_id);
    }
    p = grp_pending_find(g, m->member_id, strlen(m->member_id), &at);
    if (p != NULL) {
        grp_member_stop_timer(p);
        g->pending[at] = g->pending[--g->npending];
        samsa_grp_member_free(p);
    }
    /* Kafka's addMemberThenRebalanceOrCompleteJoin: not the session
     * timeout. A new member has no heartbeats to send while its join is
     * parked, and a disconnect is not seen then; the join timeout keeps
     * defunct new members from piling up in a long rebalance. Its session
     * timer starts when the join completes (grp_complete_join). */
    grp_member_schedule(g, m, SAMSA_GRP_NEW_MEMBER_JOIN_TIMEOUT_MS);
    grp_maybe_prepare_rebalance(g);
    grp_try_complete_join(g);
}

static void
grp_update_member_and_rebalance(samsa_grp_t *g, grp_member_t *m,
                                const samsa_grp_join_req_t *rq,
                                samsa_grp_join_cb_t *cb, void *ctx)
{
    grp_member_update(m, rq, cb, ctx);
    grp_maybe_prepare_rebalance(g);
    grp_try_complete_join(g);
}

/* Kafka's updateStaticMemberAndRebalance: a static member rejoined with a
 * new member id; the old id is fenced. */
static void
grp_static_rejoin(samsa_grp_t *g, grp_member_t *m,
                  const samsa_grp_join_req_t *rq, char *new_id,
                  samsa_grp_join_cb_t *cb, void *ctx)
{
    const char  *selected;

    grp_join_answer_member_error(m, SAMSA_ERR_FENCED_INSTANCE_ID);
    grp_sync_answer(m, g, SAMSA_ERR_FENCED_INSTANCE_ID);
    grp_member_stop_timer(m);
    samsa_info("group %s: static member %s rejoined as %s", g->id,
               m->instance_id, new_id);
    if (g->leader_id != NULL && strcmp(g->leader_id, m->member_id) == 0) {
        samsa_free(g->leader_id);
        g->leader_id = samsa_strdup(new_id);
    }
    samsa_free(m->member_id);
    m->member_id = new_id;
    samsa_free(m->client_id);
    m->client_id = samsa_strndup(rq->client_id.ptr, rq->client_id.len);
    samsa_free(m->client_host);
    m->client_host = samsa_strndup(rq->client_host.ptr,
                                       rq->client_host.len);
    grp_member_update(m, rq, cb, ctx);
    switch (g->state) {
    case SAMSA_GRP_STABLE:
        selected = grp_select_protocol(g);
        if (selected != NULL && g->protocol_name != NULL
            && strcmp(selected, g->protocol_name) == 0) {
            /* nothing changes for the others: no rebalance (KIP-345) */
            if (samsa_grpstore_write_group(g) != SAMSA_ERR_NONE) {
                samsa_warn("group %s: cannot write its metadata", g->id);
            }
            m->join_cb = NULL;
            grp_join_answer_current(g, m, cb, ctx, m->join_skip_ok);
            samsa_grp_member_touch(g, m);
            return;
        }
        grp_maybe_prepare_rebalance(g);
        break;
    case SAMSA_GRP_COMPLETING_REBALANCE:
        grp_maybe_prepare_rebalance(g);
        break;
    case SAMSA_GRP_PREPARING_REBALANCE:
        grp_try_complete_join(g);
        break;
    default:
        break;
    }
    samsa_grp_member_touch(g, m);
}

static void
grp_join_unknown(samsa_grp_t *g, const samsa_grp_join_req_t *rq,
                 samsa_grp_join_cb_t *cb, void *ctx)
{
    grp_member_t  *m;
    char          *id;

    if (g->state == SAMSA_GRP_DEAD) {
        grp_join_answer_error(cb, ctx, SAMSA_ERR_COORDINATOR_NOT_AVAILABLE,
                              NULL);
        return;
    }
    if (!grp_supports(g, rq->protocol_type, rq->protocols, rq->nprotocols)) {
        grp_join_answer_error(cb, ctx, SAMSA_ERR_INCONSISTENT_GROUP_PROTOCOL,
                              NULL);
        return;
    }
    id = grp_new_member_id(rq->client_id);
    if (rq->instance_id.ptr != NULL) {
        m = samsa_grp_static_find(g, rq->instance_id);
        if (m != NULL) {
            grp_static_rejoin(g, m, rq, id, cb, ctx);
        } else {
            grp_add_member_and_rebalance(g, rq, id, cb, ctx);
        }
        return;
    }
    if (rq->require_known_member_id) {
        /* KIP-394: hand out the id; the member joins again with it */
        m = samsa_calloc(1, sizeof(*m));
        m->member_id = id;
        m->is_pending = true;
        m->session_timeout_ms = rq->session_timeout_ms;
        g->pending = samsa_realloc(g->pending,
                                   (g->npending + 1) * sizeof(*g->pending));
        g->pending[g->npending++] = m;
        samsa_grp_member_touch(g, m);
        grp_join_answer_error(cb, ctx, SAMSA_ERR_MEMBER_ID_REQUIRED, id);
        return;
    }
    grp_add_member_and_rebalance(g, rq, id, cb, ctx);
}

static void
grp_join_known(samsa_grp_t *g, const samsa_grp_join_req_t *rq,
               samsa_grp_join_cb_t *cb, void *ctx)
{
    grp_member_t  *m;
    size_t         at;

    if (g->state == SAMSA_GRP_DEAD) {
        grp_join_answer_error(cb, ctx, SAMSA_ERR_COORDINATOR_NOT_AVAILABLE,
                              NULL);
        return;
    }
    if (!grp_supports(g, rq->protocol_type, rq->protocols, rq->nprotocols)) {
        grp_join_answer_error(cb, ctx, SAMSA_ERR_INCONSISTENT_GROUP_PROTOCOL,
                              NULL);
        return;
    }
    if (grp_pending_find(g, rq->member_id.ptr, rq->member_id.len, &at)
        != NULL) {
        grp_add_member_and_rebalance(
            g, rq, samsa_strndup(rq->member_id.ptr, rq->member_id.len),
            cb, ctx);
        return;
    }
    m = samsa_grp_member_find(g, rq->member_id.ptr, rq->member_id.len);
    if (grp_is_fenced(g, rq->instance_id, rq->member_id)) {
        grp_join_answer_error(cb, ctx, SAMSA_ERR_FENCED_INSTANCE_ID, NULL);
        return;
    }
    if (m == NULL) {
        grp_join_answer_error(cb, ctx, SAMSA_ERR_UNKNOWN_MEMBER_ID, NULL);
        return;
    }
    switch (g->state) {
    case SAMSA_GRP_PREPARING_REBALANCE:
        grp_update_member_and_rebalance(g, m, rq, cb, ctx);
        break;
    case SAMSA_GRP_COMPLETING_REBALANCE:
        if (grp_member_matches(m, rq->protocols, rq->nprotocols)) {
            grp_join_answer_current(g, m, cb, ctx, false);
        } else {
            grp_update_member_and_rebalance(g, m, rq, cb, ctx);
        }
        break;
    case SAMSA_GRP_STABLE:
        if ((g->leader_id != NULL && strcmp(g->leader_id, m->member_id) == 0)
            || !grp_member_matches(m, rq->protocols, rq->nprotocols)) {
            grp_update_member_and_rebalance(g, m, rq, cb, ctx);
        } else {
            grp_join_answer_current(g, m, cb, ctx, false);
            samsa_grp_member_touch(g, m);
        }
        break;
    default:
        grp_join_answer_error(cb, ctx, SAMSA_ERR_UNKNOWN_MEMBER_ID, NULL);
        break;
    }
}

/* A group made for a join that failed, with nothing in it, goes again. */
static void
grp_drop_if_unused(samsa_grp_t *g)
{
    if (g->state == SAMSA_GRP_EMPTY && g->nmembers == 0 && g->npending == 0
        && g->noffsets == 0 && g->generation == 0 && g->cg == NULL) {
        samsa_grp_remove(g);
    }
}

void
samsa_grp_join(samsa_grpcoord_t *gc, const samsa_grp_join_req_t *rq,
               samsa_grp_join_cb_t *cb, void *ctx)
{
    samsa_grp_t  *g;
    samsa_err_t   err;
    bool          unknown = rq->member_id.len == 0;

    if (rq->group_id.len == 0) {
        grp_join_answer_error(cb, ctx, SAMSA_ERR_INVALID_GROUP_ID, NULL);
        return;
    }
    if (rq->session_timeout_ms < gc->min_session_timeout_ms
        || rq->session_timeout_ms > gc->max_session_timeout_ms) {
        grp_join_answer_error(cb, ctx, SAMSA_ERR_INVALID_SESSION_TIMEOUT,
                              NULL);
        return;
    }
    err = samsa_grpcoord_check(gc, rq->group_id);
    if (err != SAMSA_ERR_NONE) {
        grp_join_answer_error(cb, ctx, err, NULL);
        return;
    }
    if (samsa_grpcoord_ensure_topic(gc) != SAMSA_ERR_NONE) {
        grp_join_answer_error(cb, ctx, SAMSA_ERR_COORDINATOR_NOT_AVAILABLE,
                              NULL);
        return;
    }
    g = samsa_grp_get(gc, rq->group_id, unknown);
    if (g == NULL) {
        grp_join_answer_error(cb, ctx, SAMSA_ERR_UNKNOWN_MEMBER_ID, NULL);
        return;
    }
    pthread_mutex_lock(&g->lock);
    if (g->cg != NULL && samsa_grp_cg_nmembers(g) == 0) {
        /* an empty consumer group (KIP-848) becomes a classic one again,
         * keeping its offsets; its records get tombstones first */
        if (samsa_grp_cg_ops(g)->store_forget(g) != SAMSA_ERR_NONE) {
            pthread_mutex_unlock(&g->lock);
            samsa_grp_unref(g);
            grp_join_answer_error(cb, ctx,
                                  SAMSA_ERR_COORDINATOR_NOT_AVAILABLE, NULL);
            return;
        }
        samsa_grp_cg_ops(g)->free(g->cg);
        g->cg = NULL;
        samsa_free(g->protocol_type);
        g->protocol_type = NULL;
    }
    if (g->cg != NULL) {
        /* no online migration: classic members cannot join a consumer
         * group that has members */
        grp_join_answer_error(cb, ctx, SAMSA_ERR_INCONSISTENT_GROUP_PROTOCOL,
                              NULL);
    } else if ((int64_t) g->nmembers >= gc->max_size
        && (unknown || samsa_grp_member_find(g, rq->member_id.ptr,
                                             rq->member_id.len) == NULL)) {
        grp_join_answer_error(cb, ctx, SAMSA_ERR_GROUP_MAX_SIZE_REACHED,
                              NULL);
    } else if (unknown) {
        grp_join_unknown(g, rq, cb, ctx);
    } else {
        grp_join_known(g, rq, cb, ctx);
    }
    grp_drop_if_unused(g);
    pthread_mutex_unlock(&g->lock);
    samsa_grp_unref(g);
}

/* ---- SyncGroup ------------------------------------------------------------ */

static samsa_err_t
grp_sync_check(samsa_grp_t *g, const samsa_grp_sync_req_t *rq,
               grp_member_t **out)
{
    grp_member_t  *m;

    if (g->state == SAMSA_GRP_DEAD) {
        return SAMSA_ERR_COORDINATOR_NOT_AVAILABLE;
    }
    m = samsa_grp_member_find(g, rq->member_id.ptr, rq->member_id.len);
    if (grp_is_fenced(g, rq->instance_id, rq->member_id)) {
        return SAMSA_ERR_FENCED_INSTANCE_ID;
    }
    if (m == NULL) {
        return SAMSA_ERR_UNKNOWN_MEMBER_ID;
    }
    if (rq->generation != g->generation) {
        return SAMSA_ERR_ILLEGAL_GENERATION;
    }
    if ((rq->protocol_type.ptr != NULL
         && (g->protocol_type == NULL
             || !samsa_slice_eq_cstr(rq->protocol_type, g->protocol_type)))
        || (rq->protocol_name.ptr != NULL
            && (g->protocol_name == NULL
                || !samsa_slice_eq_cstr(rq->protocol_name,
                                        g->protocol_name)))) {
        return SAMSA_ERR_INCONSISTENT_GROUP_PROTOCOL;
    }
    *out = m;
    return SAMSA_ERR_NONE;
}

/* The leader's assignment: every member gets its part (empty if the
 * leader gave none), is written, and the group is Stable. */
static void
grp_sync_leader(samsa_grp_t *g, const samsa_grp_sync_req_t *rq)
{
    grp_member_t  *m;
    size_t         i, j;

    for (i = 0; i < g->nmembers; i++) {
        m = g->members[i];
        grp_member_set_assignment(m, NULL, 0);
        for (j = 0; j < rq->nassignments; j++) {
            if (samsa_slice_eq_cstr(rq->assignments[j].member_id,
                                    m->member_id)) {
                grp_member_set_assignment(m, rq->assignments[j].assignment.ptr,
                                          rq->assignments[j].assignment.len);
                break;
            }
        }
    }
    if (samsa_grpstore_write_group(g) != SAMSA_ERR_NONE) {
        grp_reset_assignments(g, SAMSA_ERR_COORDINATOR_NOT_AVAILABLE);
        grp_maybe_prepare_rebalance(g);
        return;
    }
    samsa_grp_set_state(g, SAMSA_GRP_STABLE);
    grp_propagate_assignment(g, SAMSA_ERR_NONE);
}

void
samsa_grp_sync(samsa_grpcoord_t *gc, const samsa_grp_sync_req_t *rq,
               samsa_grp_sync_cb_t *cb, void *ctx)
{
    samsa_grp_sync_result_t  res = { .error = SAMSA_ERR_NONE };
    grp_member_t            *m = NULL;
    samsa_grp_t             *g;

    res.error = samsa_grpcoord_check(gc, rq->group_id);
    if (res.error != SAMSA_ERR_NONE) {
        cb(ctx, &res);
        return;
    }
    g = samsa_grp_get(gc, rq->group_id, false);
    if (g == NULL) {
        res.error = SAMSA_ERR_UNKNOWN_MEMBER_ID;
        cb(ctx, &res);
        return;
    }
    pthread_mutex_lock(&g->lock);
    res.error = grp_sync_check(g, rq, &m);
    if (res.error == SAMSA_ERR_NONE) {
        switch (g->state) {
        case SAMSA_GRP_PREPARING_REBALANCE:
            res.error = SAMSA_ERR_REBALANCE_IN_PROGRESS;
            break;
        case SAMSA_GRP_COMPLETING_REBALANCE:
            grp_sync_answer(m, g, SAMSA_ERR_REBALANCE_IN_PROGRESS);
            m->sync_cb = cb;
            m->sync_ctx = ctx;
            samsa_grp_member_touch(g, m);
            if (strcmp(g->leader_id, m->member_id) == 0) {
                grp_sync_leader(g, rq);
            }
            /* rq may be gone: the leader's answer released it */
            if (grp_has_member(g, m)) {
                grp_member_synced(g, m);
            }
            pthread_mutex_unlock(&g->lock);
            samsa_grp_unref(g);
            return;
        case SAMSA_GRP_STABLE:
            res.protocol_type = g->protocol_type;
            res.protocol_name = g->protocol_name;
            res.assignment = m->assignment;
            res.assignment_len = m->assignment_len;
            samsa_grp_member_touch(g, m);
            grp_member_synced(g, m);
            break;
        default:
            res.error = SAMSA_ERR_UNKNOWN_MEMBER_ID;
            break;
        }
    }
    cb(ctx, &res);
    pthread_mutex_unlock(&g->lock);
    samsa_grp_unref(g);
}

/* ---- Heartbeat ------------------------------------------------------------ */

samsa_err_t
samsa_grp_heartbeat(samsa_grpcoord_t *gc, samsa_slice_t group_id,
                    samsa_slice_t member_id, samsa_slice_t instance_id,
                    int32_t generation)
{
    samsa_grp_t   *g;
    grp_member_t  *m;
    samsa_err_t    err = samsa_grpcoord_check(gc, group_id);

    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    g = samsa_grp_get(gc, group_id, false);
    if (g == NULL) {
        return SAMSA_ERR_UNKNOWN_MEMBER_ID;
    }
    pthread_mutex_lock(&g->lock);
    m = samsa_grp_member_find(g, member_id.ptr, member_id.len);
    if (g->state == SAMSA_GRP_DEAD) {
        err = SAMSA_ERR_COORDINATOR_NOT_AVAILABLE;
    } else if (grp_is_fenced(g, instance_id, member_id)) {
        err = SAMSA_ERR_FENCED_INSTANCE_ID;
    } else if (m == NULL) {
        err = SAMSA_ERR_UNKNOWN_MEMBER_ID;
    } else if (generation != g->generation) {
        err = SAMSA_ERR_ILLEGAL_GENERATION;
    } else if (g->state == SAMSA_GRP_EMPTY) {
        err = SAMSA_ERR_UNKNOWN_MEMBER_ID;
    } else {
        samsa_grp_member_touch(g, m);
        if (g->state == SAMSA_GRP_PREPARING_REBALANCE) {
            err = SAMSA_ERR_REBALANCE_IN_PROGRESS;
        }
    }
    pthread_mutex_unlock(&g->lock);
    samsa_grp_unref(g);
    return err;
}

/* ---- LeaveGroup ----------------------------------------------------------- */

static samsa_err_t
grp_leave_one(samsa_grp_t *g, const samsa_grp_leaver_t *l)
{
    grp_member_t  *m;
    size_t         at;

    if (l->member_id.len == 0 && l->instance_id.ptr != NULL) {
        m = samsa_grp_static_find(g, l->instance_id);
        if (m == NULL) {
            return SAMSA_ERR_UNKNOWN_MEMBER_ID;
        }
        samsa_info("group %s: static member %s (%s) leaves", g->id,
                   m->instance_id, m->member_id);
        grp_remove_member(g, m);
        return SAMSA_ERR_NONE;
    }
    if (grp_is_fenced(g, l->instance_id, l->member_id)) {
        return SAMSA_ERR_FENCED_INSTANCE_ID;
    }
    m = grp_pending_find(g, l->member_id.ptr, l->member_id.len, &at);
    if (m != NULL) {
        grp_member_stop_timer(m);
        g->pending[at] = g->pending[--g->npending];
        samsa_grp_member_free(m);
        grp_try_complete_join(g);
        return SAMSA_ERR_NONE;
    }
    m = samsa_grp_member_find(g, l->member_id.ptr, l->member_id.len);
    if (m == NULL) {
        return SAMSA_ERR_UNKNOWN_MEMBER_ID;
    }
    samsa_info("group %s: member %s leaves", g->id, m->member_id);
    grp_remove_member(g, m);
    return SAMSA_ERR_NONE;
}

samsa_err_t
samsa_grp_leave(samsa_grpcoord_t *gc, samsa_slice_t group_id,
                samsa_grp_leaver_t *leavers, size_t n)
{
    samsa_grp_t  *g;
    samsa_err_t   err = samsa_grpcoord_check(gc, group_id);
    size_t        i;

    if (err != SAMSA_ERR_NONE) {
        return err;
    }
    g = samsa_grp_get(gc, group_id, false);
    if (g == NULL) {
        for (i = 0; i < n; i++) {
            leavers[i].error = SAMSA_ERR_UNKNOWN_MEMBER_ID;
        }
        return SAMSA_ERR_NONE;
    }
    pthread_mutex_lock(&g->lock);
    if (g->state == SAMSA_GRP_DEAD) {
        err = SAMSA_ERR_COORDINATOR_NOT_AVAILABLE;
    } else {
        for (i = 0; i < n; i++) {
            leavers[i].error = grp_leave_one(g, &leavers[i]);
        }
    }
    pthread_mutex_unlock(&g->lock);
    samsa_grp_unref(g);
    return err;
}
