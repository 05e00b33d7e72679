/* Unit tests for log/logmgr.c: loading several partitions from several
 * dirs, checkpoints, the clean-shutdown marker, deletion, and group
 * commit (many appends, few fdatasyncs, monotonic callbacks). */
#include "unit.h"

#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>

#include "log/ckpt.h"
#include "log/logmgr.h"
#include "log/plogtest.h"
#include "util/diag.h"
#include "util/time.h"

#define LM_NPART 4

/* What the flushed callback saw. */
typedef struct lm_flushed {
    pthread_mutex_t  lock;
    pthread_cond_t   cond;
    int64_t          flushed[LM_NPART];     /* per partition of "gc" */
    int64_t          calls;
    bool             monotonic;
} lm_flushed_t;

static void
lm_on_flushed(void *ctx, const char *topic, int32_t partition,
              int64_t flushed_offset)
{
    lm_flushed_t  *f = ctx;

    if (strcmp(topic, "gc") != 0 || partition < 0 || partition >= LM_NPART) {
        return;
    }
    pthread_mutex_lock(&f->lock);
    if (flushed_offset < f->flushed[partition]) {
        f->monotonic = false;
    }
    f->flushed[partition] = flushed_offset;
    f->calls++;
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->lock);
}

static void
lm_wait_flushed(lm_flushed_t *f, int32_t partition, int64_t offset)
{
    pthread_mutex_lock(&f->lock);
    while (f->flushed[partition] < offset) {
        pthread_cond_wait(&f->cond, &f->lock);
    }
    pthread_mutex_unlock(&f->lock);
}

typedef struct lm_fixture {
    char                   *dirs[2];
    samsa_logmgr_config_t   cfg;
    lm_flushed_t            fl;
} lm_fixture_t;

static int
lm_setup(void **state)
{
    lm_fixture_t  *f = calloc(1, sizeof(*f));

    f->dirs[0] = bg_tmpdir();
    f->dirs[1] = bg_tmpdir();
    samsa_logmgr_config_defaults(&f->cfg);
    f->cfg.dirs = (const char *const *) f->dirs;
    f->cfg.ndirs = 2;
    f->cfg.defaults = pt_config();
    f->cfg.recovery_threads_per_dir = 2;
    f->cfg.on_flushed = lm_on_flushed;
    f->cfg.on_flushed_ctx = &f->fl;
    pthread_mutex_init(&f->fl.lock, NULL);
    pthread_cond_init(&f->fl.cond, NULL);
    f->fl.monotonic = true;
    *state = f;
    return 0;
}

static int
lm_teardown(void **state)
{
    lm_fixture_t  *f = *state;

    bg_rmrf(f->dirs[0]);
    bg_rmrf(f->dirs[1]);
    pthread_mutex_destroy(&f->fl.lock);
    pthread_cond_destroy(&f->fl.cond);
    free(f);
    return 0;
}

static samsa_logmgr_t *
lm_open(lm_fixture_t *f)
{
    samsa_logmgr_t  *mgr;
    char             errstr[256];

    assert_int_equal(samsa_logmgr_open(&f->cfg, &mgr, errstr,
                                       sizeof(errstr)),
                     SAMSA_ERR_NONE);
    return mgr;
}

static bool
lm_exists(const char *dir, const char *name)
{
    char  path[600];

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

static int64_t
lm_ckpt_offset(const char *dir, const char *file, const char *topic,
               int32_t partition)
{
    samsa_ckpt_tp_t  *e;
    size_t            n, i;
    char              path[600];
    int64_t           off = -2;

    snprintf(path, sizeof(path), "%s/%s", dir, file);
    assert_int_equal(samsa_ckpt_tp_read(path, &e, &n), SAMSA_ERR_NONE);
    for (i = 0; i < n; i++) {
        if (strcmp(e[i].topic, topic) == 0 && e[i].partition == partition) {
            off = e[i].offset;
        }
    }
    samsa_ckpt_tp_free(e, n);
    return off;
}

static void
test_logmgr_create_close_reload(void **state)
{
    lm_fixture_t        *f = *state;
    samsa_logmgr_t      *mgr;
    samsa_plog_t        *plog;
    samsa_uuid_t         id = { { 9 } }, other = { { 8 } };
    int32_t              p;
    int64_t              low, total, usable;
    int                  i;

    mgr = lm_open(f);
    for (p = 0; p < LM_NPART; p++) {
        assert_int_equal(samsa_logmgr_plog_create(mgr, "orders", p, id,
                                                  &f->cfg.defaults, &plog),
                         SAMSA_ERR_NONE);
        for (i = 0; i <= p; i++) {
            pt_append(plog, 2, 1000);
        }
        samsa_plog_unref(plog);
    }
    assert_int_equal(samsa_logmgr_plog_create(mgr, "orders", 1, id,
                                              &f->cfg.defaults, NULL),
                     SAMSA_ERR_NONE);       /* get-or-create */
    assert_int_equal(samsa_logmgr_plog_create(mgr, "orders", 1, other,
                                              &f->cfg.defaults, NULL),
                     SAMSA_ERR_INCONSISTENT_TOPIC_ID);
    assert_int_equal(samsa_logmgr_plog_count(mgr), LM_NPART);
    assert_true(lm_exists(f->dirs[0], "orders-0"));     /* balanced */
    assert_true(lm_exists(f->dirs[1], "orders-1"));
    assert_true(lm_exists(f->dirs[0], "orders-2"));
    plog = samsa_logmgr_plog_ref(mgr, "orders", 3);
    assert_non_null(plog);
    assert_int_equal(samsa_plog_delete_records(plog, 2, &low),
                     SAMSA_ERR_NONE);
    samsa_plog_unref(plog);
    assert_null(samsa_logmgr_plog_ref(mgr, "orders", 9));
    assert_int_equal(samsa_logmgr_dir_count(mgr), 2);
    assert_true(samsa_logmgr_dir_online(mgr, 1));
    assert_int_equal(samsa_logmgr_dir_usage(mgr, 0, &total, &usable),
                     SAMSA_ERR_NONE);
    assert_true(total > 0 && usable >= 0 && usable <= total);
    samsa_logmgr_close(mgr);

    assert_true(lm_exists(f->dirs[0], SAMSA_LOGMGR_CLEAN_SHUTDOWN_FILE));
    assert_true(lm_exists(f->dirs[1], SAMSA_LOGMGR_CLEAN_SHUTDOWN_FILE));
    assert_int_equal(lm_ckpt_offset(f->dirs[1], "recovery-point-offset-"
                                    "checkpoint", "orders", 3),
                     8);
    assert_int_equal(lm_ckpt_offset(f->dirs[1], "log-start-offset-checkpoint",
                                    "orders", 3),
                     2);
    assert_int_equal(lm_ckpt_offset(f->dirs[0], "recovery-point-offset-"
                                    "checkpoint", "orders", 2),
                     6);

    mgr = lm_open(f);
    assert_false(lm_exists(f->dirs[0], SAMSA_LOGMGR_CLEAN_SHUTDOWN_FILE));
    assert_int_equal(samsa_logmgr_plog_count(mgr), LM_NPART);
    for (p = 0; p < LM_NPART; p++) {
        plog = samsa_logmgr_plog_ref(mgr, "orders", p);
        assert_non_null(plog);
        assert_int_equal(samsa_plog_log_end_offset(plog), 2 * (p + 1));
        assert_true(samsa_uuid_eq(samsa_plog_topic_id(plog), id));
        samsa_plog_unref(plog);
    }
    plog = samsa_logmgr_plog_ref(mgr, "orders", 3);
    assert_int_equal(samsa_plog_log_start_offset(plog), 2);
    samsa_plog_unref(plog);
    samsa_logmgr_close(mgr);
}

/* No marker: recovery scans, cutting a torn tail; deleted partitions,
 * the metadata log and odd directories are handled as Kafka does. */
static void
test_logmgr_unclean_and_deletions(void **state)
{
    lm_fixture_t        *f = *state;
    samsa_logmgr_t      *mgr;
    samsa_plog_t        *plog;
    char                 path[600];
    int64_t              size;
    int                  i;
    DIR                 *d;
    struct dirent       *de;

    f->cfg.ndirs = 1;
    mgr = lm_open(f);
    assert_int_equal(samsa_logmgr_plog_create(mgr, "t", 0, (samsa_uuid_t) {
                                                  { 1 } },
                                              &f->cfg.defaults, &plog),
                     SAMSA_ERR_NONE);
    for (i = 0; i < 10; i++) {
        pt_append(plog, 1, 1000);
    }
    samsa_plog_unref(plog);
    assert_int_equal(samsa_logmgr_plog_create(mgr, "gone", 0,
                                              (samsa_uuid_t) { { 2 } },
                                              &f->cfg.defaults, NULL),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_logmgr_plog_delete(mgr, "gone", 0),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_logmgr_plog_delete(mgr, "gone", 0),
                     SAMSA_ERR_UNKNOWN_TOPIC_OR_PARTITION);
    assert_false(lm_exists(f->dirs[0], "gone-0"));
    samsa_logmgr_close(mgr);

    snprintf(path, sizeof(path), "%s/%s", f->dirs[0],
             SAMSA_LOGMGR_CLEAN_SHUTDOWN_FILE);
    assert_int_equal(unlink(path), 0);
    snprintf(path, sizeof(path), "%s/t-0/00000000000000000000.log",
             f->dirs[0]);
    size = bg_file_size(path);
    assert_int_equal(truncate(path, size - 3), 0);      /* torn tail */
    snprintf(path, sizeof(path), "%s/__cluster_metadata-0", f->dirs[0]);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof(path), "%s/not a partition", f->dirs[0]);
    assert_int_equal(mkdir(path, 0755), 0);

    mgr = lm_open(f);
    assert_int_equal(samsa_logmgr_plog_count(mgr), 1);
    plog = samsa_logmgr_plog_ref(mgr, "t", 0);
    assert_int_equal(samsa_plog_log_end_offset(plog), 9);
    samsa_plog_unref(plog);
    assert_true(lm_exists(f->dirs[0], "__cluster_metadata-0"));
    samsa_logmgr_close(mgr);
    d = opendir(f->dirs[0]);                /* the -delete dir is gone */
    while ((de = readdir(d)) != NULL) {
        assert_null(strstr(de->d_name, "-delete"));
    }
    closedir(d);
}

/* ---- group commit -------------------------------------------------------- */

typedef struct lm_writer {
    samsa_logmgr_t  *mgr;
    lm_flushed_t    *fl;
    int32_t          partition;
    int              appends;
} lm_writer_t;

static void *
lm_writer_main(void *arg)
{
    lm_writer_t                 *w = arg;
    samsa_plog_t                *plog;
    samsa_buf_t                  b = SAMSA_BUF_INIT;
    samsa_plog_append_opts_t     opts = { .from_client = true };
    samsa_plog_append_result_t   res;
    int                          i;

    plog = samsa_logmgr_plog_ref(w->mgr, "gc", w->partition);
    for (i = 0; i < w->appends; i++) {
        b.len = 0;
        bg_simple(&b, 1, 1000);
        assert_int_equal(samsa_plog_append(plog, b.data, b.len, &opts, &res),
                         SAMSA_ERR_NONE);
        assert_true(res.durable_wanted == res.last_offset + 1);
        lm_wait_flushed(w->fl, w->partition, res.durable_wanted);
        assert_true(samsa_plog_durable_offset(plog) >= res.durable_wanted);
    }
    samsa_buf_fini(&b);
    samsa_plog_unref(plog);
    return NULL;
}

/* 8 writers per partition, each waiting for durability of every append
 * (acks after fdatasync): one fdatasync covers many appends. */
static void
test_logmgr_group_commit(void **state)
{
    lm_fixture_t          *f = *state;
    samsa_logmgr_t        *mgr;
    samsa_log_config_t     cfg = f->cfg.defaults;
    samsa_plog_t          *plog;
    samsa_plog_stats_t     st;
    samsa_logmgr_stats_t   ms;
    lm_writer_t            w[LM_NPART * 8];
    pthread_t              tid[LM_NPART * 8];
    int64_t                t0, t1;
    uint64_t               appends = 0, flushes = 0;
    int32_t                p;
    size_t                 i, n = LM_NPART * 8;

    cfg.flush_messages = 1;
    cfg.segment_bytes = 1 << 20;
    mgr = lm_open(f);
    for (p = 0; p < LM_NPART; p++) {
        assert_int_equal(samsa_logmgr_plog_create(mgr, "gc", p,
                                                  (samsa_uuid_t) { { 3 } },
                                                  &cfg, NULL),
                         SAMSA_ERR_NONE);
    }
    t0 = samsa_now_ns();
    for (i = 0; i < n; i++) {
        w[i] = (lm_writer_t) { mgr, &f->fl, (int32_t) (i % LM_NPART), 100 };
        pthread_create(&tid[i], NULL, lm_writer_main, &w[i]);
    }
    for (i = 0; i < n; i++) {
        pthread_join(tid[i], NULL);
    }
    t1 = samsa_now_ns();
    for (p = 0; p < LM_NPART; p++) {
        plog = samsa_logmgr_plog_ref(mgr, "gc", p);
        samsa_plog_stats(plog, &st);
        appends += st.appends;
        flushes += st.flushes;
        assert_int_equal(samsa_plog_durable_offset(plog), 800);
        samsa_plog_unref(plog);
    }
    samsa_logmgr_stats(mgr, &ms);
    assert_int_equal(appends, n * 100);
    assert_true(flushes < appends);
    assert_true(f->fl.monotonic);
    print_message("group commit: %" PRIu64 " durable appends in %.1f ms "
                  "(%.0f/s), %" PRIu64 " partition flushes (%.1f appends "
                  "per fdatasync), %" PRIu64 " flusher rounds\n",
                  appends, (double) (t1 - t0) / 1e6,
                  (double) appends * 1e9 / (double) (t1 - t0), flushes,
                  (double) appends / (double) flushes, ms.flush_rounds);
    samsa_logmgr_close(mgr);
}

/* logmaint's jobs, run by hand: retention and checkpoints; config changes
 * reach every partition of a topic. */
static void
test_logmgr_retention_and_config(void **state)
{
    lm_fixture_t        *f = *state;
    samsa_logmgr_t      *mgr;
    samsa_log_config_t   cfg = f->cfg.defaults, got;
    samsa_plog_t        *plog;
    int64_t              now = samsa_wall_ms();
    int                  i;

    mgr = lm_open(f);
    assert_int_equal(samsa_logmgr_plog_create(mgr, "r", 0,
                                              (samsa_uuid_t) { { 4 } }, &cfg,
                                              &plog),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_logmgr_plog_create(mgr, "r", 1,
                                              (samsa_uuid_t) { { 4 } }, &cfg,
                                              NULL),
                     SAMSA_ERR_NONE);
    for (i = 0; i < 200; i++) {
        pt_append(plog, 2, now - 1000000);
    }
    cfg.retention_ms = 1000;
    samsa_logmgr_topic_config_set(mgr, "r", &cfg);
    samsa_logmgr_retain(mgr, now);
    assert_int_equal(samsa_plog_log_start_offset(plog), 400);
    assert_int_equal(samsa_plog_segment_count(plog), 1);
    samsa_plog_unref(plog);
    plog = samsa_logmgr_plog_ref(mgr, "r", 1);
    samsa_plog_config_get(plog, &got);
    assert_int_equal(got.retention_ms, 1000);
    samsa_plog_unref(plog);
    assert_int_equal(samsa_logmgr_checkpoint(mgr), SAMSA_ERR_NONE);
    assert_int_equal(lm_ckpt_offset(f->dirs[0], "log-start-offset-checkpoint",
                                    "r", 0) +
                     lm_ckpt_offset(f->dirs[1], "log-start-offset-checkpoint",
                                    "r", 0),
                     400 - 2);              /* -2: not in the other dir */
    samsa_logmgr_close(mgr);
}

/* The high watermark of the log of "hw" partition p after a reopen: as
 * loaded (RF 1 behaviour), then once the log is replicated. */
static void
lm_hw_after_open(samsa_logmgr_t *mgr, int32_t p, int64_t *loaded,
                 int64_t *replicated)
{
    samsa_plog_t  *plog = samsa_logmgr_plog_ref(mgr, "hw", p);

    assert_non_null(plog);
    *loaded = samsa_plog_high_watermark(plog);
    samsa_plog_set_replicated(plog, true);
    *replicated = samsa_plog_high_watermark(plog);
    samsa_plog_unref(plog);
}

/* Write dir's replication-offset-checkpoint as text. */
static void
lm_write_file(const char *dir, const char *text)
{
    char   path[600];
    FILE  *fp;

    snprintf(path, sizeof(path), "%s/%s", dir,
             SAMSA_LOGMGR_HIGH_WATERMARK_FILE);
    fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

/* replication-offset-checkpoint: every log's high watermark, written by
 * samsa_logmgr_checkpoint and a clean close; at start a replicated log's
 * high watermark is min(checkpointed, LEO), a log with one replica keeps
 * HW = LEO; a missing or malformed file leaves HW = LEO. */
static void
test_logmgr_high_watermark_checkpoint(void **state)
{
    lm_fixture_t    *f = *state;
    samsa_logmgr_t  *mgr;
    samsa_plog_t    *plog;
    samsa_uuid_t     id = { { 7 } };
    const char      *d;
    char             path[600];
    int64_t          loaded, repl;
    int32_t          p;
    int              i;

    f->cfg.ndirs = 1;
    d = f->dirs[0];
    mgr = lm_open(f);
    for (p = 0; p < 2; p++) {
        assert_int_equal(samsa_logmgr_plog_create(mgr, "hw", p, id,
                                                  &f->cfg.defaults, &plog),
                         SAMSA_ERR_NONE);
        samsa_plog_set_replicated(plog, p == 0);    /* hw-0: RF 3 */
        for (i = 0; i < 5; i++) {
            pt_append(plog, 2, 1000);
        }
        if (p == 0) {
            assert_true(samsa_plog_advance_high_watermark(plog, 4));
        }
        samsa_plog_unref(plog);
    }
    assert_int_equal(samsa_logmgr_checkpoint(mgr), SAMSA_ERR_NONE);
    assert_int_equal(lm_ckpt_offset(d, SAMSA_LOGMGR_HIGH_WATERMARK_FILE,
                                    "hw", 0), 4);
    assert_int_equal(lm_ckpt_offset(d, SAMSA_LOGMGR_HIGH_WATERMARK_FILE,
                                    "hw", 1), 10);
    plog = samsa_logmgr_plog_ref(mgr, "hw", 0);
    assert_true(samsa_plog_advance_high_watermark(plog, 6));
    samsa_plog_unref(plog);
    samsa_logmgr_close(mgr);                    /* clean: written again */
    assert_int_equal(lm_ckpt_offset(d, SAMSA_LOGMGR_HIGH_WATERMARK_FILE,
                                    "hw", 0), 6);

    /* round trip: the replicated log starts at its checkpointed HW */
    mgr = lm_open(f);
    lm_hw_after_open(mgr, 0, &loaded, &repl);
    assert_int_equal(loaded, 10);               /* LEO until replicated */
    assert_int_equal(repl, 6);
    plog = samsa_logmgr_plog_ref(mgr, "hw", 1); /* RF 1: HW = LEO */
    assert_int_equal(samsa_plog_high_watermark(plog), 10);
    samsa_plog_unref(plog);
    samsa_logmgr_close(mgr);

    /* a checkpointed HW past the LEO: the LEO */
    lm_write_file(d, "0\n1\nhw 0 99\n");
    mgr = lm_open(f);
    lm_hw_after_open(mgr, 0, &loaded, &repl);
    assert_int_equal(repl, 10);
    samsa_logmgr_close(mgr);

    /* malformed, then missing: HW = LEO as before the file existed */
    lm_write_file(d, "0\n2\nhw 0 x\n");
    mgr = lm_open(f);
    lm_hw_after_open(mgr, 0, &loaded, &repl);
    assert_int_equal(repl, 10);
    samsa_logmgr_close(mgr);
    assert_int_equal(lm_ckpt_offset(d, SAMSA_LOGMGR_HIGH_WATERMARK_FILE,
                                    "hw", 0), 10);  /* rewritten */
    snprintf(path, sizeof(path), "%s/%s", d,
             SAMSA_LOGMGR_HIGH_WATERMARK_FILE);
    assert_int_equal(unlink(path), 0);
    mgr = lm_open(f);
    lm_hw_after_open(mgr, 0, &loaded, &repl);
    assert_int_equal(repl, 10);
    samsa_logmgr_close(mgr);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_logmgr_create_close_reload,
                                        lm_setup, lm_teardown),
        cmocka_unit_test_setup_teardown(test_logmgr_unclean_and_deletions,
                                        lm_setup, lm_teardown),
        cmocka_unit_test_setup_teardown(test_logmgr_group_commit, lm_setup,
                                        lm_teardown),
        cmocka_unit_test_setup_teardown(test_logmgr_retention_and_config,
                                        lm_setup, lm_teardown),
        cmocka_unit_test_setup_teardown(
            test_logmgr_high_watermark_checkpoint, lm_setup, lm_teardown),
    };

    samsa_diag_set_level(SAMSA_DIAG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
