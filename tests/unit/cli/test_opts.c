/* Unit tests for cli/opts.c: the samsa tool's flag parsing (long, short,
 * "=" forms, repeatable flags, flags between positional arguments, usage
 * errors naming the flag), numbers, key=value, topic:partitions,
 * ISO 8601 times and where the bootstrap servers come from. */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/opts.h"

static const samsa_opt_t  spec[] = {
    { "--partitions", 'p', SAMSA_OPT_VALUE, "N", "partitions" },
    { "--config", 'c', SAMSA_OPT_MULTI, "K=V", "configs" },
    { "--if-not-exists", 0, SAMSA_OPT_FLAG, NULL, "flag" },
    { "--shift-by", 0, SAMSA_OPT_VALUE, "N", "signed" },
    { NULL, 0, SAMSA_OPT_FLAG, NULL, NULL },
};

/* Parse a NULL-terminated argument list; returns parse's result. */
static int
parse(samsa_opts_t *o, char *err, const char *first, ...)
{
    char        *argv[32];
    int          argc = 0;
    const char  *a;
    va_list      ap;

    va_start(ap, first);
    for (a = first; a != NULL && argc < 32; a = va_arg(ap, const char *)) {
        argv[argc++] = (char *) a;
    }
    va_end(ap);
    err[0] = '\0';
    return samsa_opts_parse(o, spec, argc, argv, err, 256);
}

static void
test_opts_forms_and_positions(void **state)
{
    samsa_opts_t         o;
    char                 err[256];
    const char *const   *all;
    size_t               n;

    (void) state;
    assert_int_equal(parse(&o, err, "-b", "h:1", "topicA", "--partitions=3",
                           "-c", "a=1", "topicB", "--config", "b=2",
                           "--if-not-exists", "--json", "--shift-by", "-5",
                           "--", "--not-a-flag", NULL), 0);
    assert_string_equal(samsa_opts_get(&o, "--bootstrap-server"), "h:1");
    assert_string_equal(samsa_opts_get(&o, "-b"), "h:1");
    assert_string_equal(samsa_opts_get(&o, "--partitions"), "3");
    assert_true(samsa_opts_has(&o, "--if-not-exists"));
    assert_true(samsa_opts_has(&o, "--json"));
    assert_false(samsa_opts_has(&o, "--help"));
    assert_string_equal(samsa_opts_get(&o, "--shift-by"), "-5");
    all = samsa_opts_all(&o, "--config", &n);
    assert_int_equal(n, 2);
    assert_string_equal(all[0], "a=1");
    assert_string_equal(all[1], "b=2");
    assert_int_equal(o.npos, 3);
    assert_string_equal(o.pos[0], "topicA");
    assert_string_equal(o.pos[1], "topicB");
    assert_string_equal(o.pos[2], "--not-a-flag");
    samsa_opts_fini(&o);
}

static void
test_opts_last_value_wins(void **state)
{
    samsa_opts_t  o;
    char          err[256];

    (void) state;
    assert_int_equal(parse(&o, err, "-p", "1", "--partitions", "2", NULL), 0);
    assert_string_equal(samsa_opts_get(&o, "--partitions"), "2");
    samsa_opts_fini(&o);
}

static void
test_opts_usage_errors_name_the_flag(void **state)
{
    samsa_opts_t  o;
    char          err[256];

    (void) state;
    assert_int_equal(parse(&o, err, "--bogus", NULL), -1);
    assert_non_null(strstr(err, "'--bogus'"));
    samsa_opts_fini(&o);
    assert_int_equal(parse(&o, err, "--bogus=1", NULL), -1);
    assert_non_null(strstr(err, "'--bogus'"));
    samsa_opts_fini(&o);
    assert_int_equal(parse(&o, err, "-x", NULL), -1);
    assert_non_null(strstr(err, "'-x'"));
    samsa_opts_fini(&o);
    assert_int_equal(parse(&o, err, "t", "--partitions", NULL), -1);
    assert_non_null(strstr(err, "'--partitions' needs a value"));
    samsa_opts_fini(&o);
    assert_int_equal(parse(&o, err, "--partitions", "--json", NULL), -1);
    assert_non_null(strstr(err, "'--partitions'"));
    samsa_opts_fini(&o);
    assert_int_equal(parse(&o, err, "--json=yes", NULL), -1);
    assert_non_null(strstr(err, "'--json' takes no value"));
    samsa_opts_fini(&o);
}

static void
test_opts_numbers(void **state)
{
    samsa_opts_t  o;
    char          err[256];
    int64_t       v = 0;

    (void) state;
    assert_int_equal(parse(&o, err, "--partitions", "12", NULL), 0);
    assert_int_equal(samsa_opts_i64(&o, "--partitions", 1, 100, 7, &v, err,
                                    sizeof(err)), 0);
    assert_int_equal(v, 12);
    assert_int_equal(samsa_opts_i64(&o, "--shift-by", -5, 5, -3, &v, err,
                                    sizeof(err)), 0);
    assert_int_equal(v, -3);                    /* default */
    assert_int_equal(samsa_opts_i64(&o, "--partitions", 1, 10, 1, &v, err,
                                    sizeof(err)), -1);
    assert_non_null(strstr(err, "--partitions"));
    assert_non_null(strstr(err, "between 1 and 10"));
    samsa_opts_fini(&o);
    assert_int_equal(samsa_opts_parse_i64("--x", "12a", 0, 99, &v, err,
                                          sizeof(err)), -1);
    assert_non_null(strstr(err, "invalid value '12a' for --x"));
    assert_int_equal(samsa_opts_parse_i64("--x", "", 0, 99, &v, err,
                                          sizeof(err)), -1);
    assert_int_equal(samsa_opts_parse_i64("--x", "99999999999999999999", 0,
                                          INT64_MAX, &v, err, sizeof(err)),
                     -1);
}

static void
test_opts_kv(void **state)
{
    char         err[256], *key = NULL;
    const char  *value = NULL;

    (void) state;
    assert_int_equal(samsa_opts_kv("--config", "a.b=c=d", &key, &value, err,
                                   sizeof(err)), 0);
    assert_string_equal(key, "a.b");
    assert_string_equal(value, "c=d");
    free(key);
    assert_int_equal(samsa_opts_kv("--config", "a.b=", &key, &value, err,
                                   sizeof(err)), 0);
    assert_string_equal(value, "");
    free(key);
    assert_int_equal(samsa_opts_kv("--config", "novalue", &key, &value, err,
                                   sizeof(err)), -1);
    assert_non_null(strstr(err, "--config"));
    assert_int_equal(samsa_opts_kv("--config", "=v", &key, &value, err,
                                   sizeof(err)), -1);
}

static void
test_opts_topic_parts(void **state)
{
    char     err[256], *topic;
    int32_t *parts;
    size_t   n;

    (void) state;
    assert_int_equal(samsa_opts_parse_topic_parts("--topic", "t1", &topic,
                                                  &parts, &n, err,
                                                  sizeof(err)), 0);
    assert_string_equal(topic, "t1");
    assert_int_equal(n, 0);
    free(topic);
    free(parts);
    assert_int_equal(samsa_opts_parse_topic_parts("--topic", "t.x:0,2,10",
                                                  &topic, &parts, &n, err,
                                                  sizeof(err)), 0);
    assert_string_equal(topic, "t.x");
    assert_int_equal(n, 3);
    assert_int_equal(parts[0], 0);
    assert_int_equal(parts[1], 2);
    assert_int_equal(parts[2], 10);
    free(topic);
    free(parts);
    assert_int_equal(samsa_opts_parse_topic_parts("--topic", "t:1,x", &topic,
                                                  &parts, &n, err,
                                                  sizeof(err)), -1);
    assert_non_null(strstr(err, "--topic"));
    assert_null(topic);
    assert_int_equal(samsa_opts_parse_topic_parts("--topic", "t:", &topic,
                                                  &parts, &n, err,
                                                  sizeof(err)), -1);
    assert_int_equal(samsa_opts_parse_topic_parts("--topic", ":1", &topic,
                                                  &parts, &n, err,
                                                  sizeof(err)), -1);
}

static void
test_opts_datetime(void **state)
{
    char     err[256];
    int64_t  ms = 0;

    (void) state;
    assert_int_equal(samsa_opts_parse_datetime("--to-datetime",
                                               "1970-01-01T00:00:00Z", &ms,
                                               err, sizeof(err)), 0);
    assert_int_equal(ms, 0);
    /* 2024-02-29 12:34:56.789 UTC = 1709210096789 */
    assert_int_equal(samsa_opts_parse_datetime("--d",
                                               "2024-02-29T12:34:56.789", &ms,
                                               err, sizeof(err)), 0);
    assert_int_equal(ms, 1709210096789LL);
    assert_int_equal(samsa_opts_parse_datetime("--d",
                                               "2024-02-29T14:34:56.789+02:00",
                                               &ms, err, sizeof(err)), 0);
    assert_int_equal(ms, 1709210096789LL);
    assert_int_equal(samsa_opts_parse_datetime("--d",
                                               "2024-02-29T07:04:56.7-0530",
                                               &ms, err, sizeof(err)), 0);
    assert_int_equal(ms, 1709210096700LL);
    assert_int_equal(samsa_opts_parse_datetime("--d", "2024-02-29", &ms, err,
                                               sizeof(err)), 0);
    assert_int_equal(ms, 1709164800000LL);
    assert_int_equal(samsa_opts_parse_datetime("--d", "2024-02-29T12:34",
                                               &ms, err, sizeof(err)), 0);
    assert_int_equal(ms, 1709210040000LL);
    assert_int_equal(samsa_opts_parse_datetime("--d", "2024-13-01", &ms, err,
                                               sizeof(err)), -1);
    assert_non_null(strstr(err, "--d"));
    assert_int_equal(samsa_opts_parse_datetime("--d", "2024-01-01T25:00",
                                               &ms, err, sizeof(err)), -1);
    assert_int_equal(samsa_opts_parse_datetime("--d", "yesterday", &ms, err,
                                               sizeof(err)), -1);
    assert_int_equal(samsa_opts_parse_datetime("--d", "2024-01-01Tx", &ms,
                                               err, sizeof(err)), -1);
    assert_int_equal(samsa_opts_parse_datetime("--d", "2024-01-01 junk", &ms,
                                               err, sizeof(err)), -1);
}

static void
test_opts_client_conf_sources(void **state)
{
    samsa_opts_t   o;
    samsa_conf_t  *conf;
    char           err[256], path[] = "/tmp/samsa-test-opts-XXXXXX";
    FILE          *f;
    int            fd;

    (void) state;
    /* -b wins over the environment */
    setenv("SAMSA_BOOTSTRAP", "env:1", 1);
    assert_int_equal(parse(&o, err, "-b", "flag:2", NULL), 0);
    conf = samsa_conf_new();
    assert_int_equal(samsa_opts_client_conf(&o, conf, err, sizeof(err)), 0);
    assert_string_equal(samsa_conf_get(conf, "bootstrap.servers"), "flag:2");
    samsa_conf_free(conf);
    samsa_opts_fini(&o);
    /* the environment when nothing else says */
    assert_int_equal(parse(&o, err, NULL), 0);
    conf = samsa_conf_new();
    assert_int_equal(samsa_opts_client_conf(&o, conf, err, sizeof(err)), 0);
    assert_string_equal(samsa_conf_get(conf, "bootstrap.servers"), "env:1");
    samsa_conf_free(conf);
    samsa_opts_fini(&o);
    /* the file's bootstrap.servers over the environment */
    fd = mkstemp(path);
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    fprintf(f, "bootstrap.servers = file:3\nclient.id=x\n");
    fclose(f);
    assert_int_equal(parse(&o, err, "--command-config", path, NULL), 0);
    conf = samsa_conf_new();
    assert_int_equal(samsa_opts_client_conf(&o, conf, err, sizeof(err)), 0);
    assert_string_equal(samsa_conf_get(conf, "bootstrap.servers"), "file:3");
    assert_string_equal(samsa_conf_get(conf, "client.id"), "x");
    samsa_conf_free(conf);
    samsa_opts_fini(&o);
    /* none at all: an error that says how to give one */
    unsetenv("SAMSA_BOOTSTRAP");
    assert_int_equal(parse(&o, err, NULL), 0);
    conf = samsa_conf_new();
    assert_int_equal(samsa_opts_client_conf(&o, conf, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "--bootstrap-server"));
    samsa_conf_free(conf);
    samsa_opts_fini(&o);
    /* a bad key in the file names the key */
    f = fopen(path, "w");
    fprintf(f, "bootstrap.servers=a:1\nno.such.key=1\n");
    fclose(f);
    assert_int_equal(parse(&o, err, "--command-config", path, NULL), 0);
    conf = samsa_conf_new();
    assert_int_equal(samsa_opts_client_conf(&o, conf, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "no.such.key"));
    samsa_conf_free(conf);
    samsa_opts_fini(&o);
    unlink(path);
}

static void
test_opts_usage_lists_flags(void **state)
{
    char    *buf = NULL;
    size_t   len = 0;
    FILE    *f = open_memstream(&buf, &len);

    (void) state;
    samsa_opts_usage(f, "samsa x create T", "About.", spec, true);
    fclose(f);
    assert_non_null(strstr(buf, "usage: samsa x create T"));
    assert_non_null(strstr(buf, "-p, --partitions N"));
    assert_non_null(strstr(buf, "--config K=V ..."));
    assert_non_null(strstr(buf, "-b, --bootstrap-server"));
    assert_non_null(strstr(buf, "exit codes: 0 ok, 1 operation failed, 2 "
                                "usage error, 3 cannot reach the cluster"));
    free(buf);
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_opts_forms_and_positions),
        cmocka_unit_test(test_opts_last_value_wins),
        cmocka_unit_test(test_opts_usage_errors_name_the_flag),
        cmocka_unit_test(test_opts_numbers),
        cmocka_unit_test(test_opts_kv),
        cmocka_unit_test(test_opts_topic_parts),
        cmocka_unit_test(test_opts_datetime),
        cmocka_unit_test(test_opts_client_conf_sources),
        cmocka_unit_test(test_opts_usage_lists_flags),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
