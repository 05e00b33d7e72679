/* Unit tests for meta/mlog.c: the metadata log over the log layer's
 * partition log: records written in batches come back in order with their
 * offsets after a reopen, a replay spans several reads, a torn tail (a
 * crash in the middle of a write) is cut off by recovery so that only
 * whole batches are replayed and appends go on after them, and a record
 * that does not decode stops the open with its offset named. */
#include "unit.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "meta/mlog.h"
#include "util/buf.h"

typedef struct seen {
    int      n;
    int64_t  offsets[2048];
    int16_t  types[2048];
    char     last_value[64];
} seen_t;

static samsa_err_t
collect(void *ctx, const samsa_MetadataRecords_any_t *rec, int64_t offset,
        char *errstr, size_t errstr_size)
{
    seen_t  *s = ctx;

    (void) errstr;
    (void) errstr_size;
    if (s->n < 2048) {
        s->offsets[s->n] = offset;
        s->types[s->n] = rec->type;
    }
    s->n++;
    if (rec->type == SAMSA_MetadataRecords_ConfigRecord) {
        snprintf(s->last_value, sizeof(s->last_value), "%.*s",
                 (int) (rec->u.ConfigRecord.Value.len > 32
                        ? 32 : rec->u.ConfigRecord.Value.len),
                 rec->u.ConfigRecord.Value.ptr);
    }
    return SAMSA_ERR_NONE;
}

/* n framed records: a FeatureLevelRecord, then ConfigRecords whose value
 * is tag repeated to value_len bytes. */
static void
frame_records(samsa_buf_t *data, size_t *lens, int n, const char *tag,
              size_t value_len)
{
    samsa_MetadataRecords_any_t  rec;
    samsa_wr_t                   wr;
    char                        *value = malloc(value_len + 1);
    size_t                       before, i;
    int                          k;

    for (i = 0; i < value_len; i++) {
        value[i] = tag[i % strlen(tag)];
    }
    value[value_len] = '\0';
    samsa_wr_init(&wr, data);
    for (k = 0; k < n; k++) {
        memset(&rec, 0, sizeof(rec));
        if (k == 0) {
            rec.type = SAMSA_MetadataRecords_FeatureLevelRecord;
            rec.u.FeatureLevelRecord.Name =
                samsa_slice_cstr("metadata.version");
            rec.u.FeatureLevelRecord.FeatureLevel = 7;
        } else {
            rec.type = SAMSA_MetadataRecords_ConfigRecord;
            rec.u.ConfigRecord.ResourceType = 4;
            rec.u.ConfigRecord.ResourceName = samsa_slice_cstr("");
            rec.u.ConfigRecord.Name = samsa_slice_cstr("x");
            rec.u.ConfigRecord.Value = samsa_slice_cstr(value);
        }
        before = data->len;
        samsa_MetadataRecords_encode_framed(&wr, &rec);
        lens[k] = data->len - before;
    }
    free(value);
}

static void
append(samsa_mlog_t *mlog, int n, const char *tag, size_t value_len)
{
    samsa_buf_t  data = SAMSA_BUF_INIT;
    size_t       lens[64];
    char         err[512];

    frame_records(&data, lens, n, tag, value_len);
    if (samsa_mlog_append(mlog, data.data, lens, (size_t) n, err,
                          sizeof(err)) != SAMSA_ERR_NONE) {
        fail_msg("append: %s", err);
    }
    samsa_buf_fini(&data);
}

static samsa_mlog_t *
open_ok(const char *dir, seen_t *s)
{
    samsa_mlog_t  *mlog;
    char           err[512];

    memset(s, 0, sizeof(*s));
    err[0] = '\0';
    if (samsa_mlog_open(&mlog, dir, collect, s, err, sizeof(err))
        != SAMSA_ERR_NONE) {
        fail_msg("open: %s", err);
    }
    return mlog;
}

static char *
tmpdir(void)
{
    char  tmpl[] = "/tmp/samsa-mlog-XXXXXX";
    char *dir = mkdtemp(tmpl);

    assert_non_null(dir);
    return strdup(dir);
}

static void
rmtree(const char *dir)
{
    char  cmd[512];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void
segment_path(const char *dir, char *out, size_t size)
{
    snprintf(out, size, "%s/%s/00000000000000000000.log", dir,
             SAMSA_MLOG_PARTITION_DIR);
}

static void
test_mlog_reopen(void **state)
{
    char          *dir = tmpdir();
    samsa_mlog_t  *mlog;
    seen_t         s;
    struct stat    st;
    char           path[512];
    int            i;

    (void) state;
    mlog = open_ok(dir, &s);
    assert_int_equal(s.n, 0);
    assert_int_equal(samsa_mlog_next_offset(mlog), 0);
    append(mlog, 3, "a", 10);
    append(mlog, 2, "b", 10);
    assert_int_equal(samsa_mlog_next_offset(mlog), 5);
    samsa_mlog_close(mlog);
    snprintf(path, sizeof(path), "%s/%s/partition.metadata", dir,
             SAMSA_MLOG_PARTITION_DIR);
    assert_int_equal(stat(path, &st), 0);

    mlog = open_ok(dir, &s);
    assert_int_equal(s.n, 5);
    for (i = 0; i < 5; i++) {
        assert_int_equal(s.offsets[i], i);
    }
    assert_int_equal(s.types[0], SAMSA_MetadataRecords_FeatureLevelRecord);
    assert_int_equal(s.types[3], SAMSA_MetadataRecords_FeatureLevelRecord);
    assert_string_equal(s.last_value, "bbbbbbbbbb");
    assert_int_equal(samsa_mlog_next_offset(mlog), 5);
    append(mlog, 1, "c", 1);
    assert_int_equal(samsa_mlog_next_offset(mlog), 6);
    samsa_mlog_close(mlog);
    rmtree(dir);
    free(dir);
}

/* More than one read's worth (1 MiB) of batches. */
static void
test_mlog_long_replay(void **state)
{
    char          *dir = tmpdir();
    samsa_mlog_t  *mlog;
    seen_t         s;
    int            i;

    (void) state;
    mlog = open_ok(dir, &s);
    for (i = 0; i < 150; i++) {
        append(mlog, 5, i % 2 ? "x" : "y", 4000);   /* ~16 KB a batch */
    }
    samsa_mlog_close(mlog);
    mlog = open_ok(dir, &s);
    assert_int_equal(s.n, 750);
    for (i = 0; i < 750; i++) {
        assert_int_equal(s.offsets[i], i);
    }
    assert_int_equal(samsa_mlog_next_offset(mlog), 750);
    samsa_mlog_close(mlog);
    rmtree(dir);
    free(dir);
}

/* A crash in the middle of the last batch's write: recovery cuts it off. */
static void
test_mlog_torn_tail(void **state)
{
    char          *dir = tmpdir();
    samsa_mlog_t  *mlog;
    seen_t         s;
    struct stat    st;
    off_t          whole;
    char           path[512];
    int            fd;

    (void) state;
    mlog = open_ok(dir, &s);
    append(mlog, 3, "a", 100);
    samsa_mlog_close(mlog);
    segment_path(dir, path, sizeof(path));
    assert_int_equal(stat(path, &st), 0);
    whole = st.st_size;

    mlog = open_ok(dir, &s);
    append(mlog, 4, "b", 100);
    samsa_mlog_close(mlog);
    assert_int_equal(truncate(path, whole + 70), 0);  /* half a batch */
    mlog = open_ok(dir, &s);
    assert_int_equal(s.n, 3);
    assert_int_equal(samsa_mlog_next_offset(mlog), 3);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, whole);            /* tail cut off */
    append(mlog, 2, "c", 5);
    samsa_mlog_close(mlog);

    /* garbage after the last batch (a torn header) goes too */
    fd = open(path, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "\0\0\0\0\0\0\0\x05\0\0", 10), 10);
    close(fd);
    mlog = open_ok(dir, &s);
    assert_int_equal(s.n, 5);
    assert_int_equal(s.offsets[4], 4);
    assert_string_equal(s.last_value, "ccccc");
    assert_int_equal(samsa_mlog_next_offset(mlog), 5);
    samsa_mlog_close(mlog);
    rmtree(dir);
    free(dir);
}

/* A whole batch whose record is not a metadata record. */
static void
test_mlog_bad_record(void **state)
{
    static const uint8_t  junk[] = { 0x01, 0x06, 0x00, 0x00 };   /* type 6 */
    char                 *dir = tmpdir();
    samsa_mlog_t         *mlog;
    seen_t                s;
    size_t                len = sizeof(junk);
    char                  err[512];

    (void) state;
    mlog = open_ok(dir, &s);
    append(mlog, 1, "a", 1);
    assert_int_equal(samsa_mlog_append(mlog, junk, &len, 1, err, sizeof(err)),
                     SAMSA_ERR_NONE);
    samsa_mlog_close(mlog);
    memset(&s, 0, sizeof(s));
    assert_int_equal(samsa_mlog_open(&mlog, dir, collect, &s, err,
                                     sizeof(err)), SAMSA_ERR__BAD_MSG);
    assert_null(mlog);
    assert_non_null(strstr(err, "offset 1"));
    assert_int_equal(s.n, 1);
    rmtree(dir);
    free(dir);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_mlog_reopen),
        cmocka_unit_test(test_mlog_long_replay),
        cmocka_unit_test(test_mlog_torn_tail),
        cmocka_unit_test(test_mlog_bad_record),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
