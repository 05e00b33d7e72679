/* Unit tests for meta/metaprops.c: Kafka Uuid text ids (random, valid or
 * not), `samsa-server format` of one dir (written, refused when formatted,
 * skipped with ignore_formatted only for the same cluster and node, a
 * non-empty unformatted dir refused), and the start-up check (unformatted
 * dir refused or formatted, node.id and cluster.id mismatches named). */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "meta/metaprops.h"

static char  tmp_root[] = "/tmp/samsa-metaprops-XXXXXX";
static int   tmp_n;

/* A fresh path under the test's temporary root (not created). */
static void
new_dir(char *out, size_t size)
{
    snprintf(out, size, "%s/d%d", tmp_root, ++tmp_n);
}

/* The value of key in dir's meta.properties, into val. */
static bool
read_key(const char *dir, const char *key, char *val, size_t size)
{
    char   path[512], line[256];
    FILE  *f;
    size_t klen = strlen(key);
    bool   found = false;

    snprintf(path, sizeof(path), "%s/meta.properties", dir);
    f = fopen(path, "r");
    if (f == NULL) {
        return false;
    }
    while (!found && fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, key, klen) == 0 && line[klen] == '=') {
            line[strcspn(line, "\n")] = '\0';
            snprintf(val, size, "%s", line + klen + 1);
            found = true;
        }
    }
    fclose(f);
    return found;
}

#define ASSERT_HAS(s, part)                                               \
    do {                                                                  \
        if (strstr((s), (part)) == NULL) {                                \
            fail_msg("'%s' lacks '%s'", (s), (part));                     \
        }                                                                 \
    } while (0)

static void
test_metaprops_ids(void **state)
{
    char  a[SAMSA_UUID_STR_SIZE], b[SAMSA_UUID_STR_SIZE], why[256];
    int   i;

    (void) state;
    for (i = 0; i < 200; i++) {
        samsa_metaprops_random_id(a);
        assert_int_equal(strlen(a), 22);
        assert_true(a[0] != '-');
        assert_true(samsa_metaprops_id_valid(a, why, sizeof(why)));
    }
    samsa_metaprops_random_id(b);
    assert_string_not_equal(a, b);

    assert_true(samsa_metaprops_id_valid("mGoesuSdRTWxLIafHrHmxA", why,
                                         sizeof(why)));
    assert_false(samsa_metaprops_id_valid("abc", why, sizeof(why)));
    ASSERT_HAS(why, "'abc' does not appear to be a valid UUID");
    assert_false(samsa_metaprops_id_valid("mGoesuSdRTWxLIafHrHm!A", why,
                                          sizeof(why)));
    ASSERT_HAS(why, "'!' is not a URL-safe base64 character");
    /* 22 characters are 132 bits: the last 4 must be zero */
    assert_false(samsa_metaprops_id_valid("mGoesuSdRTWxLIafHrHmxB", why,
                                          sizeof(why)));
    ASSERT_HAS(why, "does not decode to 16 bytes");
    assert_false(samsa_metaprops_id_valid("AAAAAAAAAAAAAAAAAAAAAA", why,
                                          sizeof(why)));
    ASSERT_HAS(why, "zero UUID");
}

static void
test_metaprops_format(void **state)
{
    const char  *cid = "mGoesuSdRTWxLIafHrHmxA";
    const char  *other = "zDwiIG5hQBuK21g8F-nJSw";
    char         dir[256], val[64], dirid[64], errstr[1024], file[300];
    bool         skipped;

    (void) state;
    new_dir(dir, sizeof(dir));
    assert_int_equal(samsa_metaprops_format(dir, 3, cid, false, &skipped,
                                            errstr, sizeof(errstr)),
                     SAMSA_ERR_NONE);
    assert_false(skipped);
    assert_true(read_key(dir, "version", val, sizeof(val)));
    assert_string_equal(val, "1");
    assert_true(read_key(dir, "cluster.id", val, sizeof(val)));
    assert_string_equal(val, cid);
    assert_true(read_key(dir, "node.id", val, sizeof(val)));
    assert_string_equal(val, "3");
    assert_true(read_key(dir, "directory.id", dirid, sizeof(dirid)));
    assert_true(samsa_metaprops_id_valid(dirid, errstr, sizeof(errstr)));

    assert_int_equal(samsa_metaprops_format(dir, 3, cid, false, &skipped,
                                            errstr, sizeof(errstr)),
                     SAMSA_ERR__CONFIG);
    ASSERT_HAS(errstr, "is already formatted. Use --ignore-formatted to "
               "ignore this directory and format the others.");
    ASSERT_HAS(errstr, dir);

    assert_int_equal(samsa_metaprops_format(dir, 3, cid, true, &skipped,
                                            errstr, sizeof(errstr)),
                     SAMSA_ERR_NONE);
    assert_true(skipped);
    assert_int_equal(samsa_metaprops_format(dir, 3, other, true, &skipped,
                                            errstr, sizeof(errstr)),
                     SAMSA_ERR__CONFIG);
    assert_false(skipped);
    ASSERT_HAS(errstr, cid);
    ASSERT_HAS(errstr, other);
    assert_int_equal(samsa_metaprops_format(dir, 4, cid, true, &skipped,
                                            errstr, sizeof(errstr)),
                     SAMSA_ERR__CONFIG);
    ASSERT_HAS(errstr, "node.id 3, not 4");
    /* nothing of that touched the file */
    assert_true(read_key(dir, "directory.id", val, sizeof(val)));
    assert_string_equal(val, dirid);

    /* a non-empty dir without meta.properties is not formatted */
    new_dir(dir, sizeof(dir));
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(file, sizeof(file), "%s/t-0", dir);
    assert_int_equal(mkdir(file, 0755), 0);
    assert_int_equal(samsa_metaprops_format(dir, 3, cid, true, &skipped,
                                            errstr, sizeof(errstr)),
                     SAMSA_ERR__CONFIG);
    ASSERT_HAS(errstr, "is not empty but has no meta.properties");
}

static void
test_metaprops_ensure(void **state)
{
    const char  *cid = "mGoesuSdRTWxLIafHrHmxA";
    char         dir[256], dir2[256], id[SAMSA_UUID_STR_SIZE], errstr[1024];
    char         file[300], val[64];
    bool         formatted, skipped;

    (void) state;
    /* cluster mode: an unformatted dir is refused and left alone */
    new_dir(dir, sizeof(dir));
    id[0] = '\0';
    assert_int_equal(samsa_metaprops_ensure(dir, 1, id, false, &formatted,
                                            errstr, sizeof(errstr)),
                     SAMSA_ERR__CONFIG);
    ASSERT_HAS(errstr, "No `meta.properties` found in ");
    ASSERT_HAS(errstr, dir);
    ASSERT_HAS(errstr, "(have you run `samsa-server format` to format the "
               "directory?)");
    assert_int_not_equal(access(dir, F_OK), 0);

    /* single-node mode: formatted on the spot, with a new id */
    assert_int_equal(samsa_metaprops_ensure(dir, 1, id, true, &formatted,
                                            errstr, sizeof(errstr)),
                     SAMSA_ERR_NONE);
    assert_true(formatted);
    assert_true(samsa_metaprops_id_valid(id, errstr, sizeof(errstr)));
    assert_true(read_key(dir, "cluster.id", val, sizeof(val)));
    assert_string_equal(val, id);

    /* a formatted dir: its id comes out, formatting or not */
    new_dir(dir2, sizeof(dir2));
    assert_int_equal(samsa_metaprops_format(dir2, 1, cid, false, &skipped,
                                            errstr, sizeof(errstr)),
                     SAMSA_ERR_NONE);
    id[0] = '\0';
    assert_int_equal(samsa_metaprops_ensure(dir2, 1, id, false, &formatted,
                                            errstr, sizeof(errstr)),
                     SAMSA_ERR_NONE);
    assert_false(formatted);
    assert_string_equal(id, cid);

    /* another node's dir */
    assert_int_equal(samsa_metaprops_ensure(dir2, 2, id, false, &formatted,
                                            errstr, sizeof(errstr)),
                     SAMSA_ERR__CONFIG);
    snprintf(file, sizeof(file), "%s/meta.properties", dir2);
    ASSERT_HAS(errstr, "Stale or mismatched node.id");
    ASSERT_HAS(errstr, file);
    ASSERT_HAS(errstr, "says node.id 1");
    ASSERT_HAS(errstr, "configuration says node.id 2");

    /* another cluster's dir after this one's */
    assert_int_equal(samsa_metaprops_ensure(dir, 1, id, true, &formatted,
                                            errstr, sizeof(errstr)),
                     SAMSA_ERR__CONFIG);
    ASSERT_HAS(errstr, "Invalid cluster.id in: ");
    ASSERT_HAS(errstr, "Expected mGoesuSdRTWxLIafHrHmxA, but read ");
}

static int
setup(void **state)
{
    (void) state;
    return mkdtemp(tmp_root) != NULL ? 0 : -1;
}

static int
teardown(void **state)
{
    char  cmd[128];

    (void) state;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_root);
    return system(cmd) == 0 ? 0 : -1;
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metaprops_ids),
        cmocka_unit_test(test_metaprops_format),
        cmocka_unit_test(test_metaprops_ensure),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
