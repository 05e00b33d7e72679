/*
 * broker/replica.c - the replica manager: followers fetch from leaders,
 * leaders track their followers and move the high watermark (see
 * replica.h).
 */
#include "broker/replica.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "broker/forward.h"
#include "broker/isrmgr.h"
#include "broker/isrstate.h"
#include "config/config_kraft.h"
#include "proto/gen/Fetch.h"
#include "proto/gen/OffsetForLeaderEpoch.h"
#include "proto/proto.h"
#include "proto/rd.h"
#include "proto/wr.h"
#include "util/alloc.h"
#include "util/fault.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/diag.h"
#include "util/map.h"
#include "util/time.h"

#define REPL_FETCH_VERSION  15          /* ReplicaState (KIP-903) */
#define REPL_OFLE_VERSION   4           /* OffsetForLeaderEpoch, flexible */
#define REPL_IDLE_MS        1000

typedef struct repl_fetcher repl_fetcher_t;
typedef char repl_key_t[SAMSA_PURGATORY_TP_KEY_MAX];   /* a partition's */

/* One partition this node replicates with a replication factor above 1.
 * [rm->lock] every field. */
typedef struct repl_part {
    samsa_map_node_t            node;
    char                        key[SAMSA_PURGATORY_TP_KEY_MAX];
    char                       *topic;          /* NUL-terminated */
    int32_t                     partition;
    samsa_uuid_t                topic_id;
    samsa_plog_t               *plog;           /* reference */
    uint64_t                    seen;           /* image generation */
    int32_t                     leader;         /* the image's */
    int32_t                     leader_epoch;
    bool                        is_leader;
    /* leader side */
    int32_t                    *isr;
    size_t                      nisr;
    samsa_isrstate_follower_t  *fs;             /* every other replica */
    size_t                      nfs;
    int32_t                     min_isr;
    int32_t                     partition_epoch;    /* of isr */
    int64_t                     epoch_start;    /* LEO when it took over */
    uint64_t                    pending_id;     /* an AlterPartition in
                                                   flight; 0: none */
    int32_t                    *pending;        /* its proposed ISR */
    size_t                      npending;
    bool                        pending_shrink; /* the proposal is a
                                                   shrink (else an
                                                   expansion) */
    int32_t                    *maximal;        /* isr + pending (HW) */
    size_t                      nmaximal;
    int64_t                     isr_retry_ms;   /* no proposal before */
    /* follower side */
    repl_fetcher_t             *fetcher;        /* NULL: not fetched */
    int64_t                     retry_ms;       /* monotonic: not before */
    bool                        truncate;       /* to the HW, first, if
                                                   the log has no epochs */
} repl_part_t;

/* A fetcher thread for one leader.  [rm->lock] but for corr (the
 * thread's). */
struct repl_fetcher {
    samsa_replmgr_t  *rm;
    int32_t           leader_id;
    int               idx;
    pthread_t         thread;
    bool              stop;
    int               fd;               /* the thread's connection, -1 */
    int32_t           corr;             /* [thread] */
    repl_fetcher_t   *next;
};

struct samsa_replmgr {
    samsa_replmgr_conf_t  conf;         /* [const] */
    bool                  enabled;      /* [const] the gate */
    int32_t               nfetchers;    /* [const] num.replica.fetchers */
    int32_t               max_bytes;    /* [const] replica.fetch.max.bytes */
    int32_t               min_bytes;    /* [const] */
    int32_t               wait_ms;      /* [const] */
    int32_t               resp_max;     /* [const] */
    int32_t               backoff_ms;   /* [const] */
    int32_t               socket_ms;    /* [const] */
    int32_t               min_isr;      /* [const] the broker's default */
    int64_t               lag_ms;       /* [const] replica.lag.time.max.ms */
    samsa_isrmgr_t       *isr;          /* [lock] ISR changes
                                           (AlterPartition); NULL until
                                           samsa_replmgr_isr_start, and
                                           from stop on */
    uint64_t              next_id;      /* [lock] the last proposal's */
    int32_t              *eligible;     /* [lock] the image's brokers that
                                           may join an ISR */
    size_t                neligible;
    const char           *listener;     /* [const] inter.broker.listener.
                                           name, NULL: first PLAINTEXT */
    pthread_mutex_t       lock;
    pthread_cond_t        cond;         /* CLOCK_MONOTONIC; fetchers wait */
    samsa_map_t           parts;        /* [lock] repl_part_t by key */
    uint64_t              gen;          /* [lock] image generation */
    uint64_t              isr_shrinks;  /* [lock] committed ISR changes */
    uint64_t              isr_expands;  /* [lock] (IsrShrinks/-Expands) */
    long                  test_skips;   /* [lock] SAMSA_TEST_REPL_SKIP_NEW
                                           images still to skip */
    bool                  ready;        /* [lock] caught up with the
                                           metadata log since this node
                                           registered (cluster mode; one
                                           node: from the start): before
                                           it, no image is applied */
    repl_fetcher_t       *fetchers;     /* [lock] */
    bool                  stopped;      /* [lock] */
};

/* ---- the partition table ---------------------------------------------- */

static bool
repl_part_eq(const samsa_map_node_t *node, const void *key)
{
    return strcmp(SAMSA_MAP_ENTRY(node, repl_part_t, node)->key, key) == 0;
}

/* @locks lock held */
static repl_part_t *
repl_find(samsa_replmgr_t *rm, const char *key)
{
    samsa_map_node_t  *n = samsa_map_find(&rm->parts,
                                          samsa_hash_str(key, 0),
                                          repl_part_eq, key);

    return n != NULL ? SAMSA_MAP_ENTRY(n, repl_part_t, node) : NULL;
}

static void
repl_part_free(repl_part_t *rp)
{
    samsa_plog_unref(rp->plog);
    samsa_free(rp->topic);
    samsa_free(rp->isr);
    samsa_free(rp->fs);
    samsa_free(rp->pending);
    samsa_free(rp->maximal);
    samsa_free(rp);
}

/* The high watermark over the ISR (isrstate's rule); true when it moved.
 * @locks lock held */
static bool
repl_update_hw(samsa_replmgr_t *rm, repl_part_t *rp)
{
    int64_t  leo = samsa_plog_log_end_offset(rp->plog);
    int64_t  hw = samsa_isrstate_high_watermark(
        samsa_plog_high_watermark(rp->plog), leo, rm->conf.node_id, rp->fs,
        rp->nfs, rp->maximal, rp->nmaximal);

    return samsa_plog_advance_high_watermark(rp->plog, hw);
}

/* The maximal ISR (samsa_isrstate_maximal) after a change of isr or
 * pending.  @locks lock held */
static void
repl_maximal_sync(repl_part_t *rp)
{
    samsa_free(rp->maximal);
    rp->maximal = samsa_calloc(rp->nisr + rp->npending + 1,
                               sizeof(*rp->maximal));
    rp->nmaximal = samsa_isrstate_maximal(rp->isr, rp->nisr, rp->pending,
                                          rp->npending, rp->maximal);
}

/* The committed ISR is now isr (n members) at partition_epoch.
 * @locks lock held */
static void
repl_isr_set(repl_part_t *rp, const int32_t *isr, size_t n,
             int32_t partition_epoch)
{
    samsa_free(rp->isr);
    rp->nisr = n;
    rp->isr = samsa_calloc(n + 1, sizeof(*rp->isr));
    if (n > 0) {
        memcpy(rp->isr, isr, n * sizeof(*rp->isr));
    }
    rp->partition_epoch = partition_epoch;
    repl_maximal_sync(rp);
}

/* The ISR and min.insync.replicas of the image.  @locks lock held */
static void
repl_set_isr(samsa_replmgr_t *rm, repl_part_t *rp,
             const samsa_image_topic_t *t, const samsa_image_partition_t *p)
{
    const char  *v = samsa_image_topic_config(t, "min.insync.replicas");
    char        *end = NULL;
    long         n;

    /* an AlterPartition answer may have brought a newer ISR already */
    if (p->partition_epoch >= rp->partition_epoch) {
        repl_isr_set(rp, p->isr, p->nisr > 0 ? (size_t) p->nisr : 0,
                     p->partition_epoch);
    }
    rp->min_isr = rm->min_isr;
    if (v != NULL) {
        n = strtol(v, &end, 10);
        if (end != v && *end == '\0' && n >= 1 && n <= INT32_MAX) {
            rp->min_isr = (int32_t) n;
        }
    }
}

/* Become the leader of a new epoch: every other replica is a follower not
 * heard from, given replica.lag.time.max.ms from now (isrstate.h).
 * @locks lock held */
static void
repl_become_leader(samsa_replmgr_t *rm, repl_part_t *rp,
                   const samsa_image_partition_t *p)
{
    int64_t  now = samsa_now_ms();
    int32_t  i;

    rp->is_leader = true;
    rp->fetcher = NULL;
    rp->truncate = false;
    rp->partition_epoch = -1;           /* the image's ISR, whatever it is */
    rp->epoch_start = samsa_plog_log_end_offset(rp->plog);
    rp->pending_id = 0;                 /* an answer to come is ignored */
    samsa_free(rp->pending);
    rp->pending = NULL;
    rp->npending = 0;
    rp->isr_retry_ms = 0;
    samsa_free(rp->fs);
    rp->fs = samsa_calloc((size_t) p->nreplicas + 1, sizeof(*rp->fs));
    rp->nfs = 0;
    for (i = 0; i < p->nreplicas; i++) {
        if (p->replicas[i] != rm->conf.node_id) {
            samsa_isrstate_follower_init(&rp->fs[rp->nfs], p->replicas[i]);
            rp->fs[rp->nfs].last_caught_up_ms = now;
            rp->nfs++;
        }
    }
    samsa_info("replication: leading %s (leader epoch %" PRId32 ")",
               rp->key, p->leader_epoch);
}

/* The replicas changed in the same leader epoch (a reassignment, KIP-455):
 * a new replica is a follower not heard from (as repl_become_leader
 * makes them), one no longer a replica stops being one; the others keep
 * their fetch state.  @locks lock held */
static void
repl_sync_followers(samsa_replmgr_t *rm, repl_part_t *rp,
                    const samsa_image_partition_t *p)
{
    samsa_isrstate_follower_t  *fs;
    size_t                      nfs = 0, k;
    int32_t                     i;

    fs = samsa_calloc((size_t) p->nreplicas + 1, sizeof(*fs));
    for (i = 0; i < p->nreplicas; i++) {
        if (p->replicas[i] == rm->conf.node_id) {
            continue;
        }
        for (k = 0; k < rp->nfs && rp->fs[k].id != p->replicas[i]; k++) {
        }
        if (k < rp->nfs) {
            fs[nfs++] = rp->fs[k];
            continue;
        }
        samsa_isrstate_follower_init(&fs[nfs], p->replicas[i]);
        fs[nfs++].last_caught_up_ms = samsa_now_ms();
        samsa_info("replication: %s has a new replica, broker %" PRId32,
                   rp->key, p->replicas[i]);
    }
    samsa_free(rp->fs);
    rp->fs = fs;
    rp->nfs = nfs;
}

/* ---- fetchers ----------------------------------------------------------- */

static void *repl_fetcher_main(void *arg);

/* The fetcher for leader and idx, started if needed; NULL if the thread
 * cannot start.  @locks lock held */
static repl_fetcher_t *
repl_fetcher_get(samsa_replmgr_t *rm, int32_t leader, int idx)
{
    repl_fetcher_t  *f;

    for (f = rm->fetchers; f != NULL; f = f->next) {
        if (f->leader_id == leader && f->idx == idx) {
            return f;
        }
    }
    f = samsa_calloc(1, sizeof(*f));
    f->rm = rm;
    f->leader_id = leader;
    f->idx = idx;
    f->fd = -1;
    if (pthread_create(&f->thread, NULL, repl_fetcher_main, f) != 0) {
        samsa_warn("replication: cannot start a fetcher thread for "
                   "broker %" PRId32, leader);
        samsa_free(f);
        return NULL;
    }
    f->next = rm->fetchers;
    rm->fetchers = f;
    return f;
}

/* Follow leader p->leader from now on.  @locks lock held */
static void
repl_become_follower(samsa_replmgr_t *rm, repl_part_t *rp,
                     const samsa_image_partition_t *p, bool new_epoch)
{
    int  idx = (int) (samsa_hash_str(rp->key, 0)
                      % (uint64_t) rm->nfetchers);

    if (rp->is_leader) {
        rp->is_leader = false;
        samsa_free(rp->fs);
        rp->fs = NULL;
        rp->nfs = 0;
    }
    if (p->leader < 0) {
        rp->fetcher = NULL;
        return;
    }
    if (new_epoch) {
        rp->truncate = true;
    }
    rp->fetcher = repl_fetcher_get(rm, p->leader, idx);
    rp->retry_ms = 0;
    if (new_epoch) {
        samsa_info("replication: following %s from broker %" PRId32
                   " (leader epoch %" PRId32 ")", rp->key, p->leader,
                   p->leader_epoch);
    }
}

/* ---- the image ------------------------------------------------------------ */

/* Kafka's isReplicaIsrEligible, from img: the registered brokers that are
 * neither fenced nor in controlled shutdown.  @locks lock held */
static void
repl_eligible_sync(samsa_replmgr_t *rm, const samsa_image_t *img)
{
    const samsa_image_broker_t  *br;
    size_t                       i, n = samsa_image_broker_count(img);

    samsa_free(rm->eligible);
    rm->eligible = samsa_calloc(n + 1, sizeof(*rm->eligible));
    rm->neligible = 0;
    for (i = 0; i < n; i++) {
        br = samsa_image_broker_at(img, i);
        if (!br->fenced && !br->in_controlled_shutdown) {
            rm->eligible[rm->neligible++] = br->id;
        }
    }
}

/* A partition of the image this node replicates; true (the caller wakes
 * its purgatories) when its high watermark moved or this node's
 * leadership ended or began a new epoch: a delayed acks=all Produce of
 * the old epoch is answered then (NOT_LEADER_OR_FOLLOWER), not at its
 * timeout.  @locks lock held */
static bool
repl_apply_partition(samsa_replmgr_t *rm, const samsa_image_topic_t *t,
                     const samsa_image_partition_t *p)
{
    char          key[SAMSA_PURGATORY_TP_KEY_MAX];
    repl_part_t  *rp;
    samsa_plog_t *plog;
    bool          new_epoch, moved = false;

    samsa_purgatory_tp_key(key, t->name, t->name_len, p->partition);
    rp = repl_find(rm, key);
    if (rp == NULL) {
        if (rm->test_skips > 0) {
            rm->test_skips--;           /* a test's late replica manager */
            return false;
        }
        plog = samsa_logmgr_plog_ref(rm->conf.logs, t->name, p->partition);
        if (plog == NULL) {
            return false;               /* no log (yet): a later image */
        }
        rp = samsa_calloc(1, sizeof(*rp));
        memcpy(rp->key, key, sizeof(key));
        rp->topic = samsa_strdup(t->name);
        rp->partition = p->partition;
        rp->plog = plog;
        rp->leader = -1;
        rp->leader_epoch = -1;
        samsa_map_insert(&rm->parts, &rp->node, samsa_hash_str(key, 0));
        samsa_plog_set_replicated(plog, true);
    }
    rp->topic_id = t->id;
    rp->seen = rm->gen;
    new_epoch = rp->leader != p->leader
                || rp->leader_epoch != p->leader_epoch;
    if (p->leader == rm->conf.node_id) {
        if (!rp->is_leader || new_epoch) {
            moved = rp->is_leader;
            repl_become_leader(rm, rp, p);
        } else {
            repl_sync_followers(rm, rp, p);
        }
        repl_set_isr(rm, rp, t, p);
        moved = repl_update_hw(rm, rp) || moved;
    } else if (new_epoch || rp->is_leader
               || (rp->fetcher == NULL && p->leader >= 0)) {
        moved = rp->is_leader;
        repl_become_follower(rm, rp, p, new_epoch);
    }
    rp->leader = p->leader;
    rp->leader_epoch = p->leader_epoch;
    return moved;
}

/* Apply img: every partition this node replicates follows it, those gone
 * from it are dropped; the keys of the partitions whose purgatories must
 * be checked go to *wake (*nwake of them; the caller frees it).
 * @locks lock held */
static void
repl_apply_image(samsa_replmgr_t *rm, const samsa_image_t *new_img,
                 repl_key_t **wakep, size_t *nwakep)
{
    const samsa_image_topic_t      *t;
    const samsa_image_partition_t  *p;
    samsa_map_iter_t                it;
    samsa_map_node_t               *n;
    repl_part_t                    *rp;
    repl_key_t                     *wake = NULL;
    size_t                          i, nwake = 0, cap = 0;
    int32_t                         j;

    rm->gen++;
    repl_eligible_sync(rm, new_img);
    for (i = 0; i < samsa_image_topic_count(new_img); i++) {
        t = samsa_image_topic_at(new_img, i);
        for (j = 0; j < t->npartitions; j++) {
            p = &t->partitions[j];
            if (p->nreplicas <= 1
                || !samsa_image_ids_has(p->replicas, p->nreplicas,
                                        rm->conf.node_id)) {
                continue;
            }
            if (repl_apply_partition(rm, t, p)) {
                if (nwake == cap) {
                    cap = cap ? cap * 2 : 8;
                    wake = samsa_realloc(wake, cap * sizeof(*wake));
                }
                samsa_purgatory_tp_key(wake[nwake++], t->name, t->name_len,
                                       p->partition);
            }
        }
    }
    /* partitions gone from this node (deleted, reassigned) */
    samsa_map_iter_init(&it, &rm->parts);
    while ((n = samsa_map_iter_next(&it)) != NULL) {
        rp = SAMSA_MAP_ENTRY(n, repl_part_t, node);
        if (rp->seen != rm->gen) {
            samsa_map_remove(&rm->parts, n);
            repl_part_free(rp);
        }
    }
    *wakep = wake;
    *nwakep = nwake;
}

/* Check the purgatories of the nwake partitions repl_apply_image named,
 * and free wake.  @locks none held */
static void
repl_wake(samsa_replmgr_t *rm, repl_key_t *wake, size_t nwake)
{
    size_t  i;

    for (i = 0; i < nwake; i++) {
        (void) samsa_purgatory_check_and_complete(rm->conf.produce, wake[i]);
        (void) samsa_purgatory_check_and_complete(rm->conf.fetch, wake[i]);
    }
    samsa_free(wake);
}

void
samsa_replmgr_on_image(void *ctx, const samsa_image_t *old_img,
                       const samsa_image_t *new_img)
{
    samsa_replmgr_t  *rm = ctx;
    repl_key_t       *wake = NULL;
    size_t            nwake = 0;

    (void) old_img;
    if (!rm->enabled) {
        return;
    }
    pthread_mutex_lock(&rm->lock);
    if (rm->stopped || !rm->ready) {
        /* not caught up since registering: the image may be one replayed
         * from before this node's restart, whose leaderships the
         * controller is ending (samsa_replmgr_caught_up applies it) */
        pthread_mutex_unlock(&rm->lock);
        return;
    }
    repl_apply_image(rm, new_img, &wake, &nwake);
    pthread_cond_broadcast(&rm->cond);
    pthread_mutex_unlock(&rm->lock);
    repl_wake(rm, wake, nwake);
}

void
samsa_replmgr_caught_up(samsa_replmgr_t *rm)
{
    samsa_image_t  *img;
    repl_key_t     *wake = NULL;
    size_t          nwake = 0;

    if (rm == NULL || !rm->enabled) {
        return;
    }
    pthread_mutex_lock(&rm->lock);
    if (rm->stopped || rm->ready) {
        pthread_mutex_unlock(&rm->lock);
        return;
    }
    rm->ready = true;
    /* under the lock: the current image is the newest whose listener has
     * run or waits for this lock (images are published one at a time),
     * so no older image can be applied after this one */
    img = samsa_meta_image_get(rm->conf.meta);
    samsa_info("replication: caught up with the metadata log (offset %"
               PRId64 ") since registering: following the image",
               samsa_image_offset(img));
    repl_apply_image(rm, img, &wake, &nwake);
    pthread_cond_broadcast(&rm->cond);
    pthread_mutex_unlock(&rm->lock);
    samsa_image_put(img);
    repl_wake(rm, wake, nwake);
}

/* ---- the leader's side ---------------------------------------------------- */

/* Propose isr (n members) for rp: it is the pending change until its
 * answer (one in flight per partition), counted in the maximal ISR at
 * once, and queued for AlterPartition.  @locks lock held */
static void
repl_propose(samsa_replmgr_t *rm, repl_part_t *rp, const int32_t *isr,
             size_t n)
{
    samsa_isrmgr_item_t  item;

    memset(&item, 0, sizeof(item));
    rp->pending_id = ++rm->next_id;
    samsa_free(rp->pending);
    rp->pending = samsa_calloc(n + 1, sizeof(*rp->pending));
    memcpy(rp->pending, isr, n * sizeof(*isr));
    rp->npending = n;
    rp->pending_shrink = n < rp->nisr;
    repl_maximal_sync(rp);
    memcpy(item.key, rp->key, sizeof(item.key));
    item.id = rp->pending_id;
    item.topic_id = rp->topic_id;
    item.partition = rp->partition;
    item.leader_epoch = rp->leader_epoch;
    item.partition_epoch = rp->partition_epoch;
    item.isr = samsa_calloc(n + 1, sizeof(*item.isr));
    memcpy(item.isr, isr, n * sizeof(*isr));
    item.nisr = n;
    samsa_isrmgr_submit(rm->isr, &item);    /* lock order: rm -> isrmgr */
    samsa_info("replication: %s: asking the controller for ISR %s of %zu "
               "member(s) (partition epoch %" PRId32 ")", rp->key,
               n < rp->nisr ? "shrink" : "expansion", n, rp->partition_epoch);
}

/* Can rp propose an ISR change now (a leader, none in flight, not
 * backing off, an ISR manager)?  @locks lock held */
static bool
repl_may_propose(const samsa_replmgr_t *rm, const repl_part_t *rp,
                 int64_t now)
{
    return rm->isr != NULL && rp->is_leader && rp->pending_id == 0
           && now >= rp->isr_retry_ms && rp->partition_epoch >= 0;
}

/* After f's fetch: Kafka's maybeExpandIsr, for a replica the image shows
 * eligible (isReplicaIsrEligible).  @locks lock held */
static void
repl_maybe_expand(samsa_replmgr_t *rm, repl_part_t *rp,
                  const samsa_isrstate_follower_t *f)
{
    int32_t  *isr;

    if (!repl_may_propose(rm, rp, samsa_now_ms())
        || samsa_image_ids_has(rp->isr, (int32_t) rp->nisr, f->id)
        || !samsa_image_ids_has(rm->eligible, (int32_t) rm->neligible,
                                f->id)
        || !samsa_isrstate_can_join(f, samsa_plog_high_watermark(rp->plog),
                                    rp->epoch_start)) {
        return;
    }
    isr = samsa_calloc(rp->nisr + 2, sizeof(*isr));
    memcpy(isr, rp->isr, rp->nisr * sizeof(*isr));
    isr[rp->nisr] = f->id;
    repl_propose(rm, rp, isr, rp->nisr + 1);
    samsa_free(isr);
}

/* samsa_isrmgr_expire_fn: Kafka's maybeShrinkIsr for every partition
 * this node leads.  @thread isr-manager */
static void
repl_isr_expire(void *ctx, int64_t now_ms)
{
    samsa_replmgr_t   *rm = ctx;
    samsa_map_iter_t   it;
    samsa_map_node_t  *n;
    repl_part_t       *rp;
    int32_t           *out;
    size_t             nout;

    pthread_mutex_lock(&rm->lock);
    samsa_map_iter_init(&it, &rm->parts);
    while ((n = samsa_map_iter_next(&it)) != NULL) {
        rp = SAMSA_MAP_ENTRY(n, repl_part_t, node);
        if (!repl_may_propose(rm, rp, now_ms)) {
            continue;
        }
        out = samsa_calloc(rp->nisr + 1, sizeof(*out));
        nout = samsa_isrstate_shrink(rp->isr, rp->nisr, rm->conf.node_id,
                                     rp->fs, rp->nfs,
                                     samsa_plog_log_end_offset(rp->plog),
                                     now_ms, rm->lag_ms, out);
        if (nout < rp->nisr) {
            repl_propose(rm, rp, out, nout);
        }
        samsa_free(out);
    }
    pthread_mutex_unlock(&rm->lock);
}

/* samsa_isrmgr_answer_fn: the change is over.  Committed: its ISR is the
 * partition's at once (the image brings it too, later); else the image
 * says what is true and a new proposal waits a little.
 * @thread isr-manager */
static void
repl_isr_answer(void *ctx, const samsa_isrmgr_item_t *item,
                const samsa_isrmgr_answer_t *ans)
{
    samsa_replmgr_t  *rm = ctx;
    repl_part_t      *rp;
    bool              moved = false;

    pthread_mutex_lock(&rm->lock);
    rp = repl_find(rm, item->key);
    if (rp != NULL && rp->pending_id == item->id) {
        rp->pending_id = 0;
        samsa_free(rp->pending);
        rp->pending = NULL;
        rp->npending = 0;
        if (ans->err == SAMSA_ERR_NONE && rp->is_leader
            && ans->leader_epoch == rp->leader_epoch
            && ans->partition_epoch >= rp->partition_epoch) {
            /* as Kafka's PendingShrinkIsr / PendingExpandIsr tell their
             * listener: by what was proposed (the image may have brought
             * the new ISR before this answer) */
            rm->isr_shrinks += rp->pending_shrink;
            rm->isr_expands += !rp->pending_shrink;
            repl_isr_set(rp, ans->isr, ans->nisr, ans->partition_epoch);
        } else {
            samsa_info("replication: %s: ISR change not made: %s", rp->key,
                       samsa_err_name(ans->err));
            rp->isr_retry_ms = samsa_now_ms() + rm->backoff_ms;
            repl_maximal_sync(rp);
        }
        moved = repl_update_hw(rm, rp);
    }
    pthread_mutex_unlock(&rm->lock);
    if (moved) {
        (void) samsa_purgatory_check_and_complete(rm->conf.produce,
                                                  item->key);
        (void) samsa_purgatory_check_and_complete(rm->conf.fetch, item->key);
    }
}

/* The partition this node leads, or NULL.  @locks lock held */
static repl_part_t *
repl_led(samsa_replmgr_t *rm, const char *topic, size_t topic_len,
         int32_t partition, char key[SAMSA_PURGATORY_TP_KEY_MAX])
{
    repl_part_t  *rp;

    samsa_purgatory_tp_key(key, topic, topic_len, partition);
    rp = repl_find(rm, key);
    return rp != NULL && rp->is_leader ? rp : NULL;
}

bool
samsa_replmgr_leads(samsa_replmgr_t *rm, const char *topic,
                    size_t topic_len, int32_t partition,
                    int32_t leader_epoch)
{
    char          key[SAMSA_PURGATORY_TP_KEY_MAX];
    repl_part_t  *rp;
    bool          yes;

    if (rm == NULL || !rm->enabled) {
        return true;                    /* the gate off: the image says */
    }
    pthread_mutex_lock(&rm->lock);
    rp = repl_led(rm, topic, topic_len, partition, key);
    yes = rp != NULL && rp->leader_epoch == leader_epoch;
    pthread_mutex_unlock(&rm->lock);
    return yes;
}

bool
samsa_replmgr_follows(samsa_replmgr_t *rm, const char *topic,
                      size_t topic_len, int32_t partition,
                      int32_t leader_epoch)
{
    char          key[SAMSA_PURGATORY_TP_KEY_MAX];
    repl_part_t  *rp;
    bool          yes;

    if (rm == NULL || !rm->enabled) {
        return false;
    }
    pthread_mutex_lock(&rm->lock);
    samsa_purgatory_tp_key(key, topic, topic_len, partition);
    rp = repl_find(rm, key);
    yes = rp != NULL && !rp->is_leader && rp->leader >= 0
          && rp->leader_epoch == leader_epoch;
    pthread_mutex_unlock(&rm->lock);
    return yes;
}

bool
samsa_replmgr_is_follower(samsa_replmgr_t *rm, const char *topic,
                          size_t topic_len, int32_t partition,
                          int32_t replica_id)
{
    char          key[SAMSA_PURGATORY_TP_KEY_MAX];
    repl_part_t  *rp;
    bool          yes = false;
    size_t        i;

    if (rm == NULL || !rm->enabled || replica_id < 0) {
        return false;
    }
    pthread_mutex_lock(&rm->lock);
    rp = repl_led(rm, topic, topic_len, partition, key);
    for (i = 0; rp != NULL && i < rp->nfs && !yes; i++) {
        yes = rp->fs[i].id == replica_id;
    }
    pthread_mutex_unlock(&rm->lock);
    return yes;
}

size_t
samsa_replmgr_followers(samsa_replmgr_t *rm, const char *topic,
                        size_t topic_len, int32_t partition,
                        int32_t leader_epoch,
                        samsa_replmgr_follower_view_t *out, size_t max)
{
    char          key[SAMSA_PURGATORY_TP_KEY_MAX];
    repl_part_t  *rp;
    size_t        i, n = 0;

    if (rm == NULL || !rm->enabled) {
        return 0;
    }
    pthread_mutex_lock(&rm->lock);
    rp = repl_led(rm, topic, topic_len, partition, key);
    if (rp != NULL && rp->leader_epoch == leader_epoch) {
        for (i = 0; i < rp->nfs && n < max; i++) {
            out[n++] = (samsa_replmgr_follower_view_t) {
                .id = rp->fs[i].id,
                .log_end_offset = rp->fs[i].log_end_offset,
                .log_start_offset = rp->fs[i].log_start_offset,
                .last_caught_up_ms = rp->fs[i].last_caught_up_ms,
            };
        }
    }
    pthread_mutex_unlock(&rm->lock);
    return n;
}

void
samsa_replmgr_follower_fetch(samsa_replmgr_t *rm, const char *topic,
                             size_t topic_len, int32_t partition,
                             int32_t replica_id, int64_t fetch_offset,
                             int64_t log_start_offset)
{
    char          key[SAMSA_PURGATORY_TP_KEY_MAX];
    repl_part_t  *rp;
    bool          moved = false;
    size_t        i;

    if (rm == NULL || !rm->enabled) {
        return;
    }
    pthread_mutex_lock(&rm->lock);
    rp = repl_led(rm, topic, topic_len, partition, key);
    for (i = 0; rp != NULL && i < rp->nfs; i++) {
        if (rp->fs[i].id == replica_id) {
            samsa_isrstate_follower_fetch(
                &rp->fs[i], fetch_offset,
                samsa_plog_log_end_offset(rp->plog), samsa_now_ms());
            rp->fs[i].log_start_offset = log_start_offset;
            moved = repl_update_hw(rm, rp);
            repl_maybe_expand(rm, rp, &rp->fs[i]);
            break;
        }
    }
    pthread_mutex_unlock(&rm->lock);
    if (moved) {
        (void) samsa_purgatory_check_and_complete(rm->conf.produce, key);
        (void) samsa_purgatory_check_and_complete(rm->conf.fetch, key);
    }
}

void
samsa_replmgr_leader_appended(samsa_replmgr_t *rm, const char *topic,
                              size_t topic_len, int32_t partition)
{
    char          key[SAMSA_PURGATORY_TP_KEY_MAX];
    repl_part_t  *rp;
    bool          moved = false;

    if (rm == NULL || !rm->enabled) {
        return;
    }
    pthread_mutex_lock(&rm->lock);
    rp = repl_led(rm, topic, topic_len, partition, key);
    if (rp != NULL) {
        moved = repl_update_hw(rm, rp);
    }
    pthread_mutex_unlock(&rm->lock);
    if (moved) {
        (void) samsa_purgatory_check_and_complete(rm->conf.fetch, key);
    }
}

bool
samsa_replmgr_leader_isr(samsa_replmgr_t *rm, const char *topic,
                         size_t topic_len, int32_t partition, size_t *nisr,
                         int32_t *min_isr, int32_t *leader_epoch)
{
    char  key[SAMSA_PURGATORY_TP_KEY_MAX];

    samsa_purgatory_tp_key(key, topic, topic_len, partition);
    return samsa_replmgr_leader_isr_key(rm, key, nisr, min_isr, leader_epoch);
}

void
samsa_replmgr_isr_changes(samsa_replmgr_t *rm, uint64_t *shrinks,
                          uint64_t *expands)
{
    *shrinks = 0;
    *expands = 0;
    if (rm == NULL) {
        return;
    }
    pthread_mutex_lock(&rm->lock);
    *shrinks = rm->isr_shrinks;
    *expands = rm->isr_expands;
    pthread_mutex_unlock(&rm->lock);
}

bool
samsa_replmgr_leader_isr_key(samsa_replmgr_t *rm, const char *key,
                             size_t *nisr, int32_t *min_isr,
                             int32_t *leader_epoch)
{
    repl_part_t  *rp;

    if (rm == NULL || !rm->enabled) {
        return false;
    }
    pthread_mutex_lock(&rm->lock);
    rp = repl_find(rm, key);
    if (rp != NULL && !rp->is_leader) {
        rp = NULL;
    }
    if (rp != NULL) {
        *nisr = rp->nisr;
        *min_isr = rp->min_isr;
        *leader_epoch = rp->leader_epoch;
    }
    pthread_mutex_unlock(&rm->lock);
    return rp != NULL;
}

/* ---- a fetcher thread --------------------------------------------------- */

/* One partition of a fetch, as the thread took it. */
typedef struct repl_snap {
    char           key[SAMSA_PURGATORY_TP_KEY_MAX];
    samsa_uuid_t   topic_id;
    int32_t        partition;
    int32_t        leader_epoch;
    samsa_plog_t  *plog;                /* reference */
    bool           truncate;
    bool           answered;
    bool           out_of_range;        /* answered OFFSET_OUT_OF_RANGE */
    int64_t        leader_start;        /* then the leader's log start */
} repl_snap_t;

/* The partitions due for f, into *out (samsa_free it; plog references).
 * @locks lock held */
static size_t
repl_collect(samsa_replmgr_t *rm, repl_fetcher_t *f, repl_snap_t **out,
             int64_t *next_ms)
{
    samsa_map_iter_t   it;
    samsa_map_node_t  *n;
    repl_part_t       *rp;
    repl_snap_t       *s = NULL;
    size_t             k = 0, cap = 0;
    int64_t            now = samsa_now_ms();

    *next_ms = now + REPL_IDLE_MS;
    samsa_map_iter_init(&it, &rm->parts);
    while ((n = samsa_map_iter_next(&it)) != NULL) {
        rp = SAMSA_MAP_ENTRY(n, repl_part_t, node);
        if (rp->fetcher != f) {
            continue;
        }
        if (rp->retry_ms > now) {
            if (rp->retry_ms < *next_ms) {
                *next_ms = rp->retry_ms;
            }
            continue;
        }
        if (k == cap) {
            cap = cap ? cap * 2 : 8;
            s = samsa_realloc(s, cap * sizeof(*s));
        }
        memset(&s[k], 0, sizeof(s[k]));
        memcpy(s[k].key, rp->key, sizeof(rp->key));
        s[k].topic_id = rp->topic_id;
        s[k].partition = rp->partition;
        s[k].leader_epoch = rp->leader_epoch;
        s[k].plog = samsa_plog_ref(rp->plog);
        s[k].truncate = rp->truncate;
        rp->truncate = false;
        k++;
    }
    *out = s;
    return k;
}

static void
repl_snaps_free(repl_snap_t *s, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        samsa_plog_unref(s[i].plog);
    }
    samsa_free(s);
}

/* Back a partition off for replica.fetch.backoff.ms (still f's). */
static void
repl_backoff(samsa_replmgr_t *rm, repl_fetcher_t *f, const char *key)
{
    repl_part_t  *rp;

    pthread_mutex_lock(&rm->lock);
    rp = repl_find(rm, key);
    if (rp != NULL && rp->fetcher == f) {
        rp->retry_ms = samsa_now_ms() + rm->backoff_ms;
    }
    pthread_mutex_unlock(&rm->lock);
}

/* Is the partition still f's, in the epoch it was fetched in? */
static bool
repl_still_ours(samsa_replmgr_t *rm, repl_fetcher_t *f, const repl_snap_t *s)
{
    repl_part_t  *rp;
    bool          yes;

    pthread_mutex_lock(&rm->lock);
    rp = repl_find(rm, s->key);
    yes = rp != NULL && rp->fetcher == f
          && rp->leader_epoch == s->leader_epoch;
    pthread_mutex_unlock(&rm->lock);
    return yes;
}

/* Wait (lock held) until ms or a change; false on stop. */
static bool
repl_wait(samsa_replmgr_t *rm, repl_fetcher_t *f, int64_t until_ms)
{
    struct timespec  ts;

    if (f->stop) {
        return false;
    }
    ts.tv_sec = until_ms / 1000;
    ts.tv_nsec = until_ms % 1000 * 1000000;
    pthread_cond_timedwait(&rm->cond, &rm->lock, &ts);
    return !f->stop;
}

/* Where the leader is reached and this node's broker epoch, from the
 * image now.  false when the leader has no usable endpoint. */
static bool
repl_endpoint(samsa_replmgr_t *rm, int32_t leader, char *host,
              size_t host_size, int *port, int64_t *epoch)
{
    samsa_image_t                 *img = samsa_meta_image_get(rm->conf.meta);
    const samsa_image_broker_t    *b = samsa_image_broker_find(img, leader);
    const samsa_image_broker_t    *self;
    const samsa_image_endpoint_t  *ep = NULL;
    size_t                         i;

    self = samsa_image_broker_find(img, rm->conf.node_id);
    *epoch = self != NULL ? self->epoch : -1;
    if (b != NULL && rm->listener != NULL) {
        ep = samsa_image_broker_endpoint(b, rm->listener);
    }
    for (i = 0; b != NULL && rm->listener == NULL && i < b->nendpoints
                && ep == NULL; i++) {
        if (b->endpoints[i].security_protocol == 0) {   /* PLAINTEXT */
            ep = &b->endpoints[i];
        }
    }
    if (ep != NULL) {
        snprintf(host, host_size, "%s", ep->host);
        *port = ep->port;
    }
    samsa_image_put(img);
    return ep != NULL;
}

/* The Fetch request of snaps s[0..n). */
static void
repl_request(samsa_replmgr_t *rm, repl_fetcher_t *f, repl_snap_t *s,
             size_t n, int64_t broker_epoch, samsa_buf_t *frame)
{
    samsa_FetchRequest_t    rq;
    samsa_FetchTopic_t     *ts = samsa_calloc(n, sizeof(*ts));
    samsa_FetchPartition_t *ps = samsa_calloc(n, sizeof(*ps));
    samsa_wr_t              wr;
    size_t                  i;

    samsa_FetchRequest_init(&rq);
    rq.ReplicaState_set = true;
    rq.ReplicaState.ReplicaId = rm->conf.node_id;
    rq.ReplicaState.ReplicaEpoch = broker_epoch;
    rq.MaxWaitMs = rm->wait_ms;
    rq.MinBytes = rm->min_bytes;
    rq.MaxBytes = rm->resp_max;
    rq.IsolationLevel = 0;
    rq.SessionId = 0;
    rq.SessionEpoch = -1;               /* no fetch session */
    for (i = 0; i < n; i++) {
        samsa_FetchTopic_init(&ts[i]);
        samsa_FetchPartition_init(&ps[i]);
        ts[i].TopicId = s[i].topic_id;
        ts[i].Partitions = &ps[i];
        ts[i].Partitions_cnt = 1;
        ps[i].Partition = s[i].partition;
        ps[i].CurrentLeaderEpoch = s[i].leader_epoch;
        ps[i].FetchOffset = samsa_plog_log_end_offset(s[i].plog);
        ps[i].LastFetchedEpoch = samsa_plog_latest_epoch(s[i].plog);
        ps[i].LogStartOffset = samsa_plog_log_start_offset(s[i].plog);
        ps[i].PartitionMaxBytes = rm->max_bytes;
    }
    rq.Topics = ts;
    rq.Topics_cnt = (int32_t) n;
    f->corr = f->corr == INT32_MAX ? 0 : f->corr + 1;
    samsa_forward_header(&wr, frame, SAMSA_API_Fetch, REPL_FETCH_VERSION,
                         f->corr, rm->conf.node_id);
    samsa_FetchRequest_encode(&wr, REPL_FETCH_VERSION, &rq);
    samsa_free(ps);
    samsa_free(ts);
}

/* Truncate s's log to offset (below its LEO) for why; backed off when
 * that fails. */
static void
repl_truncate_log(samsa_replmgr_t *rm, repl_fetcher_t *f, repl_snap_t *s,
                  int64_t offset, const char *why)
{
    samsa_info("replication: %s: %s: truncating from log end %" PRId64
               " to %" PRId64, s->key, why,
               samsa_plog_log_end_offset(s->plog), offset);
    if (samsa_plog_truncate_to(s->plog, offset) != SAMSA_ERR_NONE) {
        samsa_warn("replication: %s: truncation failed", s->key);
        repl_backoff(rm, f, s->key);
    }
}

/* KIP-320: the leader's log does not end like this one at its
 * LastFetchedEpoch; truncate where Kafka's truncateOnFetchResponse does
 * (samsa_epochs_truncation_offset) and fetch again from there. */
static void
repl_diverged(samsa_replmgr_t *rm, repl_fetcher_t *f, repl_snap_t *s,
              int32_t epoch, int64_t end_offset)
{
    int64_t  off = samsa_plog_truncation_offset(s->plog, epoch, end_offset);
    char     why[96];

    if (off >= samsa_plog_log_end_offset(s->plog)) {
        samsa_warn("replication: %s: the leader's DivergingEpoch {%" PRId32
                   ", %" PRId64 "} leaves nothing to truncate", s->key,
                   epoch, end_offset);
        repl_backoff(rm, f, s->key);
        return;
    }
    snprintf(why, sizeof(why), "diverged from the leader (its epoch %"
             PRId32 " ends at %" PRId64 ")", epoch, end_offset);
    repl_truncate_log(rm, f, s, off, why);
}

/* One partition's answer. */
static void
repl_partition_answer(samsa_replmgr_t *rm, repl_fetcher_t *f, repl_snap_t *s,
                      const samsa_FetchPartitionData_t *pd)
{
    samsa_plog_append_result_t  res;
    int64_t                     low;
    samsa_err_t                 err = (samsa_err_t) pd->ErrorCode;

    s->answered = true;
    if (!repl_still_ours(rm, f, s)) {
        return;                         /* moved on meanwhile */
    }
    if (err == SAMSA_ERR_OFFSET_OUT_OF_RANGE) {
        /* the leader's log end is asked for after this answer
         * (repl_out_of_range) */
        s->out_of_range = true;
        s->leader_start = pd->LogStartOffset;
        return;
    }
    if (err == SAMSA_ERR_NONE && pd->DivergingEpoch_set) {
        repl_diverged(rm, f, s, pd->DivergingEpoch.Epoch,
                      pd->DivergingEpoch.EndOffset);
        return;
    }
    if (err != SAMSA_ERR_NONE) {
        samsa_debug("replication: fetch of %s from broker %" PRId32 ": %s",
                    s->key, f->leader_id, samsa_err_name(err));
        repl_backoff(rm, f, s->key);
        return;
    }
    if (pd->Records.bytes.ptr != NULL && pd->Records.bytes.len > 0) {
        err = samsa_plog_append_replica(
            s->plog, (const uint8_t *) pd->Records.bytes.ptr,
            pd->Records.bytes.len, &res);
        if (err != SAMSA_ERR_NONE) {
            samsa_warn("replication: %s: cannot append what broker %" PRId32
                       " sent: %s%s%s", s->key, f->leader_id,
                       samsa_err_name(err),
                       res.summary.err_msg != NULL ? ": " : "",
                       res.summary.err_msg != NULL ? res.summary.err_msg
                                                   : "");
            repl_backoff(rm, f, s->key);
            return;
        }
    }
    if (samsa_plog_advance_high_watermark(s->plog, pd->HighWatermark)) {
        /* KIP-392: consumers long-polling this follower */
        (void) samsa_purgatory_check_and_complete(rm->conf.fetch, s->key);
    }
    if (pd->LogStartOffset > samsa_plog_log_start_offset(s->plog)
        && pd->LogStartOffset <= samsa_plog_high_watermark(s->plog)
        && samsa_plog_delete_records(s->plog, pd->LogStartOffset, &low)
               != SAMSA_ERR_NONE) {
        samsa_debug("replication: %s: cannot move the log start to %" PRId64,
                    s->key, pd->LogStartOffset);
    }
}

/* The response frame (correlation id checked) for s[0..n). */
static samsa_err_t
repl_response(samsa_replmgr_t *rm, repl_fetcher_t *f, repl_snap_t *s,
              size_t n, const uint8_t *answer, size_t alen)
{
    samsa_FetchResponse_t  resp;
    samsa_arena_t          arena = SAMSA_ARENA_INIT;
    samsa_rd_t             rd;
    samsa_err_t            err;
    int32_t                i, j;
    size_t                 k;

    samsa_rd_init(&rd, answer + 4, alen - 4);
    samsa_rd_tags_skip(&rd);            /* response header v1 */
    err = samsa_FetchResponse_decode(&rd, REPL_FETCH_VERSION, &arena, &resp);
    if (err == SAMSA_ERR_NONE && resp.ErrorCode != 0) {
        err = (samsa_err_t) resp.ErrorCode;
    }
    for (i = 0; err == SAMSA_ERR_NONE && i < resp.Responses_cnt; i++) {
        const samsa_FetchableTopicResponse_t  *tr = &resp.Responses[i];

        for (j = 0; j < tr->Partitions_cnt; j++) {
            for (k = 0; k < n; k++) {
                if (!s[k].answered
                    && samsa_uuid_eq(s[k].topic_id, tr->TopicId)
                    && s[k].partition == tr->Partitions[j].PartitionIndex) {
                    repl_partition_answer(rm, f, &s[k], &tr->Partitions[j]);
                    break;
                }
            }
        }
    }
    samsa_arena_fini(&arena);
    return err;
}

/* Kafka's truncateToHighWatermark: a partition that starts a new epoch
 * as a follower with a log but no leader epochs (nothing to send as
 * LastFetchedEpoch, so no DivergingEpoch can come) truncates to its high
 * watermark first.  With epochs it does not: the leader's DivergingEpoch
 * says where (KIP-320, repl_diverged). */
static void
repl_truncate(repl_snap_t *s, size_t n)
{
    int64_t  hw;
    size_t   i;

    for (i = 0; i < n; i++) {
        if (!s[i].truncate || samsa_plog_latest_epoch(s[i].plog) >= 0) {
            continue;
        }
        hw = samsa_plog_high_watermark(s[i].plog);
        if (samsa_plog_log_end_offset(s[i].plog) > hw) {
            samsa_info("replication: %s: truncating to the high watermark "
                       "%" PRId64 " (new leader epoch %" PRId32 ")",
                       s[i].key, hw, s[i].leader_epoch);
            if (samsa_plog_truncate_to(s[i].plog, hw) != SAMSA_ERR_NONE) {
                samsa_warn("replication: %s: truncation failed", s[i].key);
            }
        }
    }
}

/* The topic name of s (a copy, samsa_free it), NULL once gone. */
static char *
repl_topic_copy(samsa_replmgr_t *rm, const repl_snap_t *s)
{
    repl_part_t  *rp;
    char         *topic = NULL;

    pthread_mutex_lock(&rm->lock);
    rp = repl_find(rm, s->key);
    if (rp != NULL) {
        topic = samsa_strdup(rp->topic);
    }
    pthread_mutex_unlock(&rm->lock);
    return topic;
}

/* The OffsetForLeaderEpoch request for the partitions of s[0..n) answered
 * OFFSET_OUT_OF_RANGE, each asking for its current leader epoch (whose
 * end is the leader's LEO); their names go in names[] (samsa_free each).
 * @returns how many went in. */
static size_t
repl_oor_request(samsa_replmgr_t *rm, repl_fetcher_t *f, repl_snap_t *s,
                 size_t n, char **names, samsa_buf_t *frame)
{
    samsa_OffsetForLeaderEpochRequest_t  rq;
    samsa_OffsetForLeaderTopic_t        *ts = samsa_calloc(n, sizeof(*ts));
    samsa_OffsetForLeaderPartition_t    *ps = samsa_calloc(n, sizeof(*ps));
    samsa_wr_t                           wr;
    size_t                               i, m = 0;

    samsa_OffsetForLeaderEpochRequest_init(&rq);
    rq.ReplicaId = rm->conf.node_id;
    for (i = 0; i < n; i++) {
        names[i] = s[i].out_of_range ? repl_topic_copy(rm, &s[i]) : NULL;
        if (names[i] == NULL) {
            continue;
        }
        samsa_OffsetForLeaderTopic_init(&ts[m]);
        samsa_OffsetForLeaderPartition_init(&ps[m]);
        ts[m].Topic = samsa_slice_cstr(names[i]);
        ts[m].Partitions = &ps[m];
        ts[m].Partitions_cnt = 1;
        ps[m].Partition = s[i].partition;
        ps[m].CurrentLeaderEpoch = s[i].leader_epoch;
        ps[m].LeaderEpoch = s[i].leader_epoch;
        m++;
    }
    rq.Topics = ts;
    rq.Topics_cnt = (int32_t) m;
    f->corr = f->corr == INT32_MAX ? 0 : f->corr + 1;
    samsa_forward_header(&wr, frame, SAMSA_API_OffsetForLeaderEpoch,
                         REPL_OFLE_VERSION, f->corr, rm->conf.node_id);
    samsa_OffsetForLeaderEpochRequest_encode(&wr, REPL_OFLE_VERSION, &rq);
    samsa_free(ps);
    samsa_free(ts);
    return m;
}

/* Kafka's fetchOffsetAndTruncate for a partition answered
 * OFFSET_OUT_OF_RANGE, given the leader's LEO (-1: unknown): a log past
 * it is truncated to it; one below the leader's log start (from the
 * Fetch answer) is truncated fully and restarts there
 * (truncateFullyAndStartAt); else (the LEO unknown too) fetched again
 * after the backoff. */
static void
repl_oor_apply(samsa_replmgr_t *rm, repl_fetcher_t *f, repl_snap_t *s,
               int64_t leader_leo)
{
    int64_t  leo = samsa_plog_log_end_offset(s->plog);
    char     why[80];

    if (leader_leo >= 0 && leader_leo < leo) {
        snprintf(why, sizeof(why), "past the leader's log end %" PRId64,
                 leader_leo);
        repl_truncate_log(rm, f, s, leader_leo, why);
        return;
    }
    if (leader_leo >= 0 && s->leader_start > leo) {
        samsa_warn("replication: %s: log end %" PRId64 " is below the "
                   "leader's log start %" PRId64 ": truncating fully and "
                   "starting there", s->key, leo, s->leader_start);
        if (samsa_plog_truncate_fully(s->plog, s->leader_start)
            == SAMSA_ERR_NONE) {
            return;
        }
    }
    repl_backoff(rm, f, s->key);
}

/* Ask the leader (on fd) for its LEO of the partitions of s[0..n) that
 * were answered OFFSET_OUT_OF_RANGE and apply repl_oor_apply.  false: the
 * exchange failed (the caller closes the connection). */
static bool
repl_out_of_range(samsa_replmgr_t *rm, repl_fetcher_t *f, int fd,
                  repl_snap_t *s, size_t n)
{
    samsa_OffsetForLeaderEpochResponse_t  resp;
    samsa_arena_t                         arena = SAMSA_ARENA_INIT;
    samsa_buf_t                           frame = SAMSA_BUF_INIT;
    samsa_rd_t                            rd;
    char                                **names;
    uint8_t                              *answer = NULL;
    size_t                                i, k, m, alen = 0;
    int32_t                               t, j;
    int64_t                              *leos;
    samsa_err_t                           err;

    for (i = 0, m = 0; i < n; i++) {
        m += s[i].out_of_range;
    }
    if (m == 0) {
        return true;
    }
    names = samsa_calloc(n, sizeof(*names));
    leos = samsa_calloc(n, sizeof(*leos));
    m = repl_oor_request(rm, f, s, n, names, &frame);
    err = m == 0 ? SAMSA_ERR_NONE
                 : samsa_forward_exchange(fd, frame.data, frame.len, f->corr,
                                          rm->socket_ms, &answer, &alen);
    samsa_buf_fini(&frame);
    for (i = 0; i < n; i++) {
        leos[i] = -1;
    }
    if (m > 0 && err == SAMSA_ERR_NONE) {
        samsa_rd_init(&rd, answer + 4, alen - 4);
        samsa_rd_tags_skip(&rd);        /* response header v1 */
        if (samsa_OffsetForLeaderEpochResponse_decode(
                &rd, REPL_OFLE_VERSION, &arena, &resp) == SAMSA_ERR_NONE) {
            for (t = 0; t < resp.Topics_cnt; t++) {
                const samsa_OffsetForLeaderTopicResult_t  *tr =
                    &resp.Topics[t];

                for (j = 0; j < tr->Partitions_cnt; j++) {
                    const samsa_OffsetForLeaderEpochEndOffset_t  *pr =
                        &tr->Partitions[j];

                    for (k = 0; k < n; k++) {
                        if (names[k] != NULL && pr->ErrorCode == 0
                            && pr->LeaderEpoch == s[k].leader_epoch
                            && s[k].partition == pr->Partition
                            && samsa_slice_eq_cstr(tr->Topic, names[k])) {
                            leos[k] = pr->EndOffset;
                        }
                    }
                }
            }
        }
        samsa_free(answer);
    }
    for (i = 0; i < n; i++) {
        if (names[i] != NULL && err == SAMSA_ERR_NONE
            && repl_still_ours(rm, f, &s[i])) {
            repl_oor_apply(rm, f, &s[i], leos[i]);
        }
        samsa_free(names[i]);
    }
    samsa_arena_fini(&arena);
    samsa_free(leos);
    samsa_free(names);
    return err == SAMSA_ERR_NONE;
}

/* Connect (if need be), send, read, apply.  false: the exchange failed
 * (the connection is closed then). */
static bool
repl_fetch_once(samsa_replmgr_t *rm, repl_fetcher_t *f, repl_snap_t *s,
                size_t n)
{
    samsa_buf_t   frame = SAMSA_BUF_INIT;
    uint8_t      *answer = NULL;
    size_t        alen = 0;
    char          host[256];
    int           port = 0, fd;
    int64_t       epoch;
    samsa_err_t   err;

    if (!repl_endpoint(rm, f->leader_id, host, sizeof(host), &port,
                       &epoch)) {
        samsa_debug("replication: broker %" PRId32 " has no inter-broker "
                    "endpoint", f->leader_id);
        return false;
    }
    pthread_mutex_lock(&rm->lock);
    fd = f->fd;
    pthread_mutex_unlock(&rm->lock);
    if (fd < 0) {
        fd = samsa_forward_connect(host, port, rm->socket_ms);
        if (fd < 0) {
            samsa_debug("replication: cannot connect to broker %" PRId32
                        " at %s:%d", f->leader_id, host, port);
            return false;
        }
        pthread_mutex_lock(&rm->lock);
        f->fd = fd;
        if (f->stop) {
            (void) shutdown(fd, SHUT_RDWR);
        }
        pthread_mutex_unlock(&rm->lock);
    }
    repl_request(rm, f, s, n, epoch, &frame);
    err = samsa_forward_exchange(fd, frame.data, frame.len, f->corr,
                                 rm->socket_ms, &answer, &alen);
    samsa_buf_fini(&frame);
    if (err == SAMSA_ERR_NONE) {
        err = repl_response(rm, f, s, n, answer, alen);
        if (err != SAMSA_ERR_NONE) {
            samsa_debug("replication: Fetch to broker %" PRId32 ": %s",
                        f->leader_id, samsa_err_name(err));
        }
        samsa_free(answer);
        if (repl_out_of_range(rm, f, fd, s, n)) {
            return true;
        }
    }
    pthread_mutex_lock(&rm->lock);
    f->fd = -1;
    pthread_mutex_unlock(&rm->lock);
    close(fd);
    return false;
}

static void *
repl_fetcher_main(void *arg)
{
    repl_fetcher_t   *f = arg;
    samsa_replmgr_t  *rm = f->rm;
    repl_snap_t      *s;
    size_t            n;
    int64_t           next_ms;
    char              name[16];
    bool              ok;

    snprintf(name, sizeof(name), "rfetch-%d-%d", (int) f->leader_id,
             f->idx);
    samsa_thread_name_set(name);
    pthread_mutex_lock(&rm->lock);
    while (!f->stop) {
        n = repl_collect(rm, f, &s, &next_ms);
        if (n == 0) {
            samsa_free(s);
            (void) repl_wait(rm, f, next_ms);
            continue;
        }
        pthread_mutex_unlock(&rm->lock);
        repl_truncate(s, n);
        ok = repl_fetch_once(rm, f, s, n);
        repl_snaps_free(s, n);
        pthread_mutex_lock(&rm->lock);
        if (!ok) {
            (void) repl_wait(rm, f, samsa_now_ms() + rm->backoff_ms);
        }
    }
    if (f->fd >= 0) {
        close(f->fd);
        f->fd = -1;
    }
    pthread_mutex_unlock(&rm->lock);
    return NULL;
}

/* ---- life ------------------------------------------------------------------ */

void
samsa_replmgr_new(const samsa_replmgr_conf_t *conf, samsa_replmgr_t **out)
{
    samsa_replmgr_t     *rm = samsa_calloc(1, sizeof(*rm));
    const samsa_config_t *cfg = conf->cfg;
    pthread_condattr_t   ca;

    rm->conf = *conf;
    rm->enabled = samsa_config_bool(cfg, "unstable.replication.enable");
    /* samsa-server-faults: leave a new replicated partition unapplied for
     * that many image passes (a partition whose log came later) */
    rm->test_skips = SAMSA_TEST_HOOK("SAMSA_TEST_REPL_SKIP_NEW", 0);
    /* one node: its metadata log is whole from the start; a cluster node
     * waits for samsa_replmgr_caught_up */
    rm->ready = !samsa_config_kraft(cfg)->is_cluster;
    rm->nfetchers = samsa_config_int(cfg, "num.replica.fetchers");
    if (rm->nfetchers < 1) {
        rm->nfetchers = 1;
    }
    rm->max_bytes = samsa_config_int(cfg, "replica.fetch.max.bytes");
    rm->min_bytes = samsa_config_int(cfg, "replica.fetch.min.bytes");
    rm->wait_ms = samsa_config_int(cfg, "replica.fetch.wait.max.ms");
    rm->resp_max = samsa_config_int(cfg, "replica.fetch.response.max.bytes");
    rm->backoff_ms = samsa_config_int(cfg, "replica.fetch.backoff.ms");
    rm->socket_ms = samsa_config_int(cfg, "replica.socket.timeout.ms");
    if (rm->socket_ms <= rm->wait_ms) {
        rm->socket_ms = rm->wait_ms + 1000;     /* a long poll must fit */
    }
    rm->min_isr = samsa_config_int(cfg, "min.insync.replicas");
    rm->lag_ms = samsa_config_long(cfg, "replica.lag.time.max.ms");
    rm->listener = samsa_config_str(cfg, "inter.broker.listener.name");
    pthread_mutex_init(&rm->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&rm->cond, &ca);
    pthread_condattr_destroy(&ca);
    samsa_map_init(&rm->parts);
    *out = rm;
}

samsa_err_t
samsa_replmgr_isr_start(samsa_replmgr_t *rm, samsa_controller_t *ctrl)
{
    samsa_isrmgr_conf_t  conf = {
        .node_id = rm->conf.node_id, .ctrl = ctrl,
        .kraft = samsa_config_kraft(rm->conf.cfg), .meta = rm->conf.meta,
        .expire_ms = rm->lag_ms / 2, .expire = repl_isr_expire,
        .answer = repl_isr_answer, .ctx = rm,
    };
    samsa_isrmgr_t      *im;
    samsa_err_t          err;

    if (!rm->enabled) {
        return SAMSA_ERR_NONE;
    }
    err = samsa_isrmgr_new(&conf, &im);
    if (err == SAMSA_ERR_NONE) {
        pthread_mutex_lock(&rm->lock);
        rm->isr = im;
        pthread_mutex_unlock(&rm->lock);
    }
    return err;
}

void
samsa_replmgr_stop(samsa_replmgr_t *rm)
{
    repl_fetcher_t  *f, *next;
    samsa_isrmgr_t  *im;

    if (rm == NULL) {
        return;
    }
    pthread_mutex_lock(&rm->lock);
    im = rm->isr;                       /* no proposal from now on */
    rm->isr = NULL;
    pthread_mutex_unlock(&rm->lock);
    samsa_isrmgr_free(im);              /* its callbacks take rm->lock */
    pthread_mutex_lock(&rm->lock);
    if (rm->stopped) {
        pthread_mutex_unlock(&rm->lock);
        return;
    }
    rm->stopped = true;
    for (f = rm->fetchers; f != NULL; f = f->next) {
        f->stop = true;
        if (f->fd >= 0) {
            (void) shutdown(f->fd, SHUT_RDWR);
        }
    }
    pthread_cond_broadcast(&rm->cond);
    f = rm->fetchers;
    rm->fetchers = NULL;
    pthread_mutex_unlock(&rm->lock);
    for (; f != NULL; f = next) {
        next = f->next;
        pthread_join(f->thread, NULL);
        samsa_free(f);
    }
}

void
samsa_replmgr_free(samsa_replmgr_t *rm)
{
    samsa_map_iter_t   it;
    samsa_map_node_t  *n;

    if (rm == NULL) {
        return;
    }
    samsa_replmgr_stop(rm);
    samsa_map_iter_init(&it, &rm->parts);
    while ((n = samsa_map_iter_next(&it)) != NULL) {
        samsa_map_remove(&rm->parts, n);
        repl_part_free(SAMSA_MAP_ENTRY(n, repl_part_t, node));
    }
    samsa_map_fini(&rm->parts);
    samsa_free(rm->eligible);
    pthread_cond_destroy(&rm->cond);
    pthread_mutex_destroy(&rm->lock);
    samsa_free(rm);
}
