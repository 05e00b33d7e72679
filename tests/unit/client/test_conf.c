/*
 * tests/unit/client/test_conf.c - client configuration: Java names and
 * defaults, per-value checks and cross-key rules, errors naming the key.
 */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <samsa/conf.h>

#include "client/conf_defs.h"
#include "client/consumer/cconf.h"
#include "client/producer/pconf.h"

static void
test_conf_defaults_are_javas(void **state)
{
    (void) state;
    assert_string_equal(samsa_conf_default("acks"), "all");
    assert_string_equal(samsa_conf_default("linger.ms"), "5");
    assert_string_equal(samsa_conf_default("batch.size"), "16384");
    assert_string_equal(samsa_conf_default("buffer.memory"), "33554432");
    assert_string_equal(samsa_conf_default("max.block.ms"), "60000");
    assert_string_equal(samsa_conf_default("compression.type"), "none");
    assert_string_equal(samsa_conf_default("enable.idempotence"), "true");
    assert_string_equal(
        samsa_conf_default("max.in.flight.requests.per.connection"), "5");
    assert_string_equal(samsa_conf_default("retries"), "2147483647");
    assert_string_equal(samsa_conf_default("retry.backoff.ms"), "100");
    assert_string_equal(samsa_conf_default("retry.backoff.max.ms"), "1000");
    assert_string_equal(samsa_conf_default("delivery.timeout.ms"), "120000");
    assert_string_equal(samsa_conf_default("request.timeout.ms"), "30000");
    assert_string_equal(samsa_conf_default("max.request.size"), "1048576");
    assert_string_equal(
        samsa_conf_default("partitioner.adaptive.partitioning.enable"),
        "true");
    assert_string_equal(
        samsa_conf_default("partitioner.availability.timeout.ms"), "0");
    assert_string_equal(samsa_conf_default("partitioner.ignore.keys"),
                        "false");
    assert_string_equal(samsa_conf_default("metadata.max.age.ms"), "300000");
    assert_string_equal(samsa_conf_default("compression.gzip.level"), "-1");
    assert_string_equal(samsa_conf_default("compression.lz4.level"), "9");
    assert_string_equal(samsa_conf_default("compression.zstd.level"), "3");
    assert_null(samsa_conf_default("transactional.id"));
    assert_null(samsa_conf_default("no.such.key"));
}

/* Each kind of row says what is wrong in its own words, and the values
 * each accepts: numbers with blanks around them, enum names (group.protocol
 * in any case), levels for the codec, assignors by short or class name. */
static void
test_conf_checks_by_kind(void **state)
{
    static const char *const  bad[][3] = {
        { "linger.ms", " x", "not a number" },
        { "linger.ms", "2147483648", "must be between 0 and 2147483647" },
        { "batch.size", "4294967296", "must be between 0 and 2147483647" },
        { "connections.max.idle.ms", "-2",
          "must be between -1 and 9223372036854775807" },
        { "enable.idempotence", "yes", "expected true or false" },
        { "acks", "2", "expected all, -1, 0 or 1" },
        { "compression.type", "brotli",
          "expected none, gzip, snappy, lz4 or zstd" },
        { "compression.gzip.level", "10", "not a valid level for this codec" },
        { "compression.lz4.level", "4294967296", "not a number" },
        { "security.protocol", "SASL",
          "expected PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL" },
        { "sasl.mechanism", "scram-sha-256",
          "not a SASL mechanism name (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, "
          "OAUTHBEARER)" },
        { "auto.offset.reset", "Latest", "expected latest, earliest or none" },
        { "isolation.level", "x",
          "expected read_uncommitted or read_committed" },
        { "group.protocol", "x", "expected classic or consumer" },
        { "partition.assignment.strategy", " , ",
          "expected a list of range, roundrobin, cooperative-sticky (or "
          "their Java class names)" },
    };
    static const char *const  good[][2] = {
        { "linger.ms", "\t7 " }, { "acks", "-1" },
        { "group.protocol", "CONSUMER" }, { "compression.zstd.level", "-5" },
        { "partition.assignment.strategy",
          "org.apache.kafka.clients.consumer.RangeAssignor, roundrobin" },
        { "key.serializer", "anything" }, { "client.id", "" },
        { "security.protocol", "SASL_SSL" },
        { "security.protocol", "SASL_PLAINTEXT" },
        { "sasl.mechanism", "SCRAM-SHA-512" },
        { "sasl.mechanism", "OAUTHBEARER" },    /* refused only when used */
    };
    samsa_conf_t             *conf = samsa_conf_new();
    char                      err[256], want[256];
    size_t                    i;

    (void) state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(samsa_conf_set(conf, bad[i][0], bad[i][1], err,
                                        sizeof(err)), SAMSA_ERR__CONFIG);
        snprintf(want, sizeof(want),
                 "invalid value '%s' for configuration '%s': %s", bad[i][1],
                 bad[i][0], bad[i][2]);
        assert_string_equal(err, want);
    }
    for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        assert_int_equal(samsa_conf_set(conf, good[i][0], good[i][1], err,
                                        sizeof(err)), SAMSA_ERR_NONE);
    }
    assert_int_equal(samsa_conf_long(conf, "linger.ms"), 7);
    samsa_conf_free(conf);
}

static void
test_conf_bad_values_name_the_key(void **state)
{
    samsa_conf_t  *conf = samsa_conf_new();
    char           err[256];

    (void) state;
    assert_int_equal(samsa_conf_set(conf, "linger.ms", "abc", err,
                                    sizeof(err)), SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "'linger.ms'"));
    assert_non_null(strstr(err, "'abc'"));
    assert_int_equal(samsa_conf_set(conf, "acks", "2", err, sizeof(err)),
                     SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "'acks'"));
    assert_int_equal(samsa_conf_set(conf, "compression.type", "brotli", err,
                                    sizeof(err)), SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "'compression.type'"));
    assert_int_equal(samsa_conf_set(conf, "compression.zstd.level", "23",
                                    err, sizeof(err)), SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "'compression.zstd.level'"));
    assert_int_equal(samsa_conf_set(conf, "batch.size", "-1", err,
                                    sizeof(err)), SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "'batch.size'"));
    assert_int_equal(samsa_conf_set(conf, "enable.idempotence", "yes", err,
                                    sizeof(err)), SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "'enable.idempotence'"));
    assert_int_equal(samsa_conf_set(conf, "max.in.flight.requests.per."
                                    "connection", "0", err, sizeof(err)),
                     SAMSA_ERR__CONFIG);
    assert_int_equal(samsa_conf_set(conf, "bogus.key", "1", err,
                                    sizeof(err)), SAMSA_ERR__NOENT);
    assert_non_null(strstr(err, "'bogus.key'"));
    assert_int_equal(samsa_conf_set(conf, "key.serializer", "x.Y", err,
                                    sizeof(err)), SAMSA_ERR_NONE);
    assert_int_equal(samsa_conf_set_kv(conf, "linger.ms=7", err,
                                       sizeof(err)), SAMSA_ERR_NONE);
    assert_string_equal(samsa_conf_get(conf, "linger.ms"), "7");
    assert_int_equal(samsa_conf_set_kv(conf, "linger.ms", err, sizeof(err)),
                     SAMSA_ERR__CONFIG);
    assert_null(samsa_conf_get(conf, "acks"));
    samsa_conf_free(conf);
}

static samsa_err_t
load(const char *const *kvs, samsa_pconf_t *pc, char *err, size_t n)
{
    samsa_conf_t  *conf = samsa_conf_new();
    samsa_err_t    e = SAMSA_ERR_NONE;

    for (; *kvs != NULL && e == SAMSA_ERR_NONE; kvs++) {
        e = samsa_conf_set_kv(conf, *kvs, err, n);
    }
    if (e == SAMSA_ERR_NONE) {
        e = samsa_pconf_load(pc, conf, err, n);
    }
    samsa_conf_free(conf);
    return e;
}

static void
test_conf_cross_key_rules(void **state)
{
    samsa_pconf_t  pc;
    char           err[256];
    const char    *none[] = { NULL };
    const char    *ok[] = { "bootstrap.servers=a:1, b:2", "acks=1",
                            "compression.type=zstd",
                            "compression.zstd.level=7", NULL };
    const char    *idem_acks[] = { "bootstrap.servers=a:1",
                                   "enable.idempotence=true", "acks=1",
                                   NULL };
    const char    *idem_infl[] = { "bootstrap.servers=a:1",
                                   "enable.idempotence=true",
                                   "max.in.flight.requests.per.connection=6",
                                   NULL };
    const char    *dt[] = { "bootstrap.servers=a:1",
                            "delivery.timeout.ms=1000", NULL };
    const char    *dt_auto[] = { "bootstrap.servers=a:1", "linger.ms=100000",
                                 NULL };
    const char    *txn[] = { "bootstrap.servers=a:1", "transactional.id=x",
                             NULL };
    const char    *noport[] = { "bootstrap.servers=hostonly", NULL };

    (void) state;
    assert_int_equal(load(none, &pc, err, sizeof(err)), SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "'bootstrap.servers'"));
    samsa_pconf_fini(&pc);

    /* acks=1 without an explicit enable.idempotence: Java turns
     * idempotence off rather than failing. */
    assert_int_equal(load(ok, &pc, err, sizeof(err)), SAMSA_ERR_NONE);
    assert_int_equal(pc.net.nbootstrap, 2);
    assert_string_equal(pc.net.bootstrap[1], "b:2");
    assert_int_equal(pc.acks, 1);
    assert_false(pc.idempotence);
    assert_int_equal(pc.codec, SAMSA_CODEC_ZSTD);
    assert_int_equal(pc.level, 7);
    assert_int_equal(pc.linger_ms, 5);
    assert_int_equal(pc.delivery_timeout_ms, 120000);
    samsa_pconf_fini(&pc);

    assert_int_equal(load(idem_acks, &pc, err, sizeof(err)),
                     SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "'acks'"));
    samsa_pconf_fini(&pc);
    assert_int_equal(load(idem_infl, &pc, err, sizeof(err)),
                     SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "'max.in.flight.requests.per.connection'"));
    samsa_pconf_fini(&pc);
    assert_int_equal(load(dt, &pc, err, sizeof(err)), SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "'delivery.timeout.ms'"));
    samsa_pconf_fini(&pc);
    assert_int_equal(load(dt_auto, &pc, err, sizeof(err)), SAMSA_ERR_NONE);
    assert_int_equal(pc.delivery_timeout_ms, 130000);
    assert_true(pc.idempotence);
    assert_int_equal(pc.acks, -1);
    samsa_pconf_fini(&pc);
    /* transactions are supported: a transactional.id implies
     * idempotence (test_txnmgr.c has its conflicts) */
    assert_int_equal(load(txn, &pc, err, sizeof(err)), SAMSA_ERR_NONE);
    assert_string_equal(pc.transactional_id, "x");
    assert_true(pc.idempotence);
    samsa_pconf_fini(&pc);
    assert_int_equal(load(noport, &pc, err, sizeof(err)), SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "'bootstrap.servers'"));
    samsa_pconf_fini(&pc);
}

static void
test_conf_load_file_names_line(void **state)
{
    char           path[] = "/tmp/samsa-conf-XXXXXX";
    int            fd = mkstemp(path);
    FILE          *f = fdopen(fd, "w");
    samsa_conf_t  *conf = samsa_conf_new();
    char           err[512];

    (void) state;
    fprintf(f, "# producer\nbootstrap.servers=localhost:9092\n"
               "linger.ms=oops\n");
    fclose(f);
    assert_int_equal(samsa_conf_load_file(conf, path, err, sizeof(err)),
                     SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "'linger.ms'"));
    assert_non_null(strstr(err, ":3"));
    assert_string_equal(samsa_conf_get(conf, "bootstrap.servers"),
                        "localhost:9092");
    unlink(path);
    samsa_conf_free(conf);
}

/* receive.buffer.bytes: the consumer's default is ConsumerConfig's
 * 65536, not the shared key's (the producer's 32768); a value given,
 * -1 (the OS's) included, is used as is. */
static void
test_conf_consumer_receive_buffer(void **state)
{
    samsa_conf_t   *conf = samsa_conf_new();
    samsa_cconf_t   cc;
    char            err[256];

    (void) state;
    assert_int_equal(samsa_conf_set(conf, "bootstrap.servers", "h:1", err,
                                    sizeof(err)), SAMSA_ERR_NONE);
    assert_int_equal(samsa_cconf_load(&cc, conf, err, sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_int_equal(cc.net.receive_buffer_bytes, 65536);
    samsa_cconf_fini(&cc);
    assert_int_equal(samsa_conf_set(conf, "receive.buffer.bytes", "-1", err,
                                    sizeof(err)), SAMSA_ERR_NONE);
    assert_int_equal(samsa_cconf_load(&cc, conf, err, sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_int_equal(cc.net.receive_buffer_bytes, -1);
    samsa_cconf_fini(&cc);
    assert_int_equal(samsa_conf_set(conf, "receive.buffer.bytes", "262144",
                                    err, sizeof(err)), SAMSA_ERR_NONE);
    assert_int_equal(samsa_cconf_load(&cc, conf, err, sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_int_equal(cc.net.receive_buffer_bytes, 262144);
    samsa_cconf_fini(&cc);
    samsa_conf_free(conf);
}

/* group.protocol (KIP-848): the classic-only keys are refused with
 * consumer, group.remote.assignor with classic (Kafka 4.0's
 * ConsumerConfig), each error naming the key. */
static void
test_conf_group_protocol_rules(void **state)
{
    static const char *const  classic_only[] = {
        "partition.assignment.strategy", "session.timeout.ms",
        "heartbeat.interval.ms",
    };
    static const char *const  values[] = { "range", "30000", "1000" };
    samsa_conf_t             *conf;
    samsa_cconf_t             cc;
    char                      err[256];
    size_t                    i;

    (void) state;
    assert_null(samsa_conf_default("group.remote.assignor"));
    conf = samsa_conf_new();
    assert_int_equal(samsa_conf_set(conf, "bootstrap.servers", "h:1", err,
                                    sizeof(err)), SAMSA_ERR_NONE);
    assert_int_equal(samsa_conf_set(conf, "group.id", "g", err, sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_int_equal(samsa_conf_set(conf, "group.protocol", "raft", err,
                                    sizeof(err)), SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "'group.protocol'"));
    /* classic (default): group.remote.assignor is refused */
    assert_int_equal(samsa_cconf_load(&cc, conf, err, sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_false(cc.group_protocol_consumer);
    samsa_cconf_fini(&cc);
    assert_int_equal(samsa_conf_set(conf, "group.remote.assignor", "range",
                                    err, sizeof(err)), SAMSA_ERR_NONE);
    assert_int_equal(samsa_cconf_load(&cc, conf, err, sizeof(err)),
                     SAMSA_ERR__CONFIG);
    assert_non_null(strstr(err, "'group.remote.assignor'"));
    samsa_cconf_fini(&cc);
    /* consumer: accepted with the assignor */
    assert_int_equal(samsa_conf_set(conf, "group.protocol", "CONSUMER", err,
                                    sizeof(err)), SAMSA_ERR_NONE);
    assert_int_equal(samsa_cconf_load(&cc, conf, err, sizeof(err)),
                     SAMSA_ERR_NONE);
    assert_true(cc.group_protocol_consumer);
    assert_string_equal(cc.group_remote_assignor, "range");
    samsa_cconf_fini(&cc);
    samsa_conf_free(conf);
    for (i = 0; i < sizeof(classic_only) / sizeof(classic_only[0]); i++) {
        conf = samsa_conf_new();
        assert_int_equal(samsa_conf_set(conf, "bootstrap.servers", "h:1",
                                        err, sizeof(err)), SAMSA_ERR_NONE);
        assert_int_equal(samsa_conf_set(conf, "group.protocol", "consumer",
                                        err, sizeof(err)), SAMSA_ERR_NONE);
        assert_int_equal(samsa_conf_set(conf, classic_only[i], values[i],
                                        err, sizeof(err)), SAMSA_ERR_NONE);
        assert_int_equal(samsa_cconf_load(&cc, conf, err, sizeof(err)),
                         SAMSA_ERR__CONFIG);
        assert_non_null(strstr(err, classic_only[i]));
        assert_non_null(strstr(err, "group.protocol=consumer"));
        samsa_cconf_fini(&cc);
        /* the same key is fine with classic */
        assert_int_equal(samsa_conf_set(conf, "group.protocol", "classic",
                                        err, sizeof(err)), SAMSA_ERR_NONE);
        assert_int_equal(samsa_cconf_load(&cc, conf, err, sizeof(err)),
                         SAMSA_ERR_NONE);
        samsa_cconf_fini(&cc);
        samsa_conf_free(conf);
    }
}

int
main(void)
{
    const struct CMUnitTest  tests[] = {
        cmocka_unit_test(test_conf_defaults_are_javas),
        cmocka_unit_test(test_conf_bad_values_name_the_key),
        cmocka_unit_test(test_conf_checks_by_kind),
        cmocka_unit_test(test_conf_cross_key_rules),
        cmocka_unit_test(test_conf_load_file_names_line),
        cmocka_unit_test(test_conf_consumer_receive_buffer),
        cmocka_unit_test(test_conf_group_protocol_rules),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
