/* Unit tests for config/config_kraft.c: the controller.quorum.voters and
 * bootstrap.servers parsers, the single-node default (this node its own
 * only voter), and Kafka's KRaft cross-key checks in cluster mode
 * (process.roles set): node.id required, voters or bootstrap servers,
 * controllers among the voters and brokers not, broker-only listeners,
 * inter.broker.listener.name. */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>

#include "config/config.h"
#include "config/config_kraft.h"
#include "util/alloc.h"
#include "util/props.h"

#define ORIGIN "server.properties:7"

/* Load from "k1", "v1", ..., NULL, each set with ORIGIN. */
static samsa_err_t
load_kv(samsa_config_t *cfg, char *errstr, size_t size, const char *k, ...)
{
    samsa_props_t  *props = samsa_props_new();
    samsa_err_t     err;
    va_list         ap;

    va_start(ap, k);
    for (; k != NULL; k = va_arg(ap, const char *)) {
        samsa_props_set(props, k, va_arg(ap, const char *), ORIGIN);
    }
    va_end(ap);
    errstr[0] = '\0';
    err = samsa_config_load(cfg, props, errstr, size);
    samsa_props_free(props);
    return err;
}

#define LOAD_OK(cfg, ...)                                                 \
    do {                                                                  \
        char  e_[1024];                                                   \
        if (load_kv((cfg), e_, sizeof(e_), __VA_ARGS__, NULL)             \
            != SAMSA_ERR_NONE) {                                          \
            fail_msg("load failed: %s", e_);                              \
        }                                                                 \
    } while (0)

/* Loading the pairs fails with SAMSA_ERR__CONFIG and errstr holding each
 * of the NULL-ended strings in want (checked before the pairs). */
#define LOAD_BAD(want, ...)                                               \
    do {                                                                  \
        samsa_config_t  c_;                                               \
        char            e_[1024];                                         \
        const char     *w_[] = { UNPAREN want, NULL };                    \
        size_t          i_;                                               \
        assert_int_equal(load_kv(&c_, e_, sizeof(e_), __VA_ARGS__, NULL), \
                         SAMSA_ERR__CONFIG);                              \
        for (i_ = 0; w_[i_] != NULL; i_++) {                              \
            if (strstr(e_, w_[i_]) == NULL) {                             \
                fail_msg("line %d: errstr '%s' lacks '%s'", __LINE__, e_, \
                         w_[i_]);                                         \
            }                                                             \
        }                                                                 \
        samsa_config_fini(&c_);                                           \
    } while (0)
#define UNPAREN(...) __VA_ARGS__

/* ---- parsers ------------------------------------------------------------ */

static void
voters_bad(const char *text, const char *why)
{
    samsa_config_voter_t  *v = (void *) 1;
    size_t                 n = 9;
    char                   buf[512] = "";

    assert_int_equal(samsa_config_voters_parse(text, &v, &n, buf,
                                               sizeof(buf)),
                     SAMSA_ERR__CONFIG);
    assert_null(v);
    assert_int_equal(n, 0);
    if (strstr(buf, why) == NULL) {
        fail_msg("voters '%s': why '%s' lacks '%s'", text, buf, why);
    }
}

static void
test_kraft_voters_parse(void **state)
{
    samsa_config_voter_t  *v;
    size_t                 n;
    char                   why[512];

    (void) state;
    assert_int_equal(samsa_config_voters_parse(
                         " 1@ctl-1.example:9093 ,2@[::1]:19093,30@10.0.0.3:1",
                         &v, &n, why, sizeof(why)),
                     SAMSA_ERR_NONE);
    assert_int_equal(n, 3);
    assert_int_equal(v[0].id, 1);
    assert_string_equal(v[0].addr.host, "ctl-1.example");
    assert_int_equal(v[0].addr.port, 9093);
    assert_int_equal(v[1].id, 2);
    assert_string_equal(v[1].addr.host, "::1");
    assert_int_equal(v[1].addr.port, 19093);
    assert_int_equal(v[2].id, 30);
    assert_string_equal(v[2].addr.host, "10.0.0.3");
    assert_int_equal(v[2].addr.port, 1);
    samsa_free(v);

    assert_int_equal(samsa_config_voters_parse("", &v, &n, why, sizeof(why)),
                     SAMSA_ERR_NONE);
    assert_int_equal(n, 0);
    samsa_free(v);
    assert_int_equal(samsa_config_voters_parse(NULL, &v, &n, why,
                                               sizeof(why)),
                     SAMSA_ERR_NONE);
    assert_int_equal(n, 0);
    samsa_free(v);

    voters_bad("localhost:9093",
               "'localhost:9093' is not of the form {id}@{host}:{port}");
    voters_bad("@localhost:9093", "'@localhost:9093' is not of the form");
    voters_bad("1@localhost", "missing ':' before the port");
    voters_bad("1@localhost:", "port must be a number from 1 to 65535");
    voters_bad("1@localhost:0", "port must be a number from 1 to 65535");
    voters_bad("1@localhost:65536", "port must be a number from 1 to 65535");
    voters_bad("1@:9093", "'1@:9093' is not of the form {id}@{host}:{port}: "
               "missing host");
    voters_bad("x@localhost:9093", "the voter id 'x' is not a number");
    voters_bad("-1@localhost:9093", "the voter id '-1' is not a number");
    voters_bad("2147483648@h:1", "the voter id '2147483648' is not a number");
    voters_bad("1@a:1,1@b:2", "'1@b:2': voter id 1 is listed twice");
    voters_bad("1@a:1,,2@b:2", "empty");
    voters_bad("1@::1:9093", "in brackets");
}

static void
test_kraft_hostports_parse(void **state)
{
    samsa_config_hostport_t  *hp;
    size_t                    n;
    char                      why[512];

    (void) state;
    assert_int_equal(samsa_config_hostports_parse("a:1, [::1]:2,a:1", &hp, &n,
                                                  why, sizeof(why)),
                     SAMSA_ERR_NONE);
    assert_int_equal(n, 3);
    assert_string_equal(hp[0].host, "a");
    assert_int_equal(hp[0].port, 1);
    assert_string_equal(hp[1].host, "::1");
    assert_int_equal(hp[2].port, 1);
    samsa_free(hp);
    assert_int_equal(samsa_config_hostports_parse("a", &hp, &n, why,
                                                  sizeof(why)),
                     SAMSA_ERR__CONFIG);
    assert_null(hp);
    assert_non_null(strstr(why, "'a': missing ':'"));
    assert_int_equal(samsa_config_hostports_parse(":9093", &hp, &n, why,
                                                  sizeof(why)),
                     SAMSA_ERR__CONFIG);
    assert_non_null(strstr(why, "missing host"));
}

/* ---- single-node default ------------------------------------------------ */

static void
test_kraft_single_node_default(void **state)
{
    const samsa_config_kraft_t  *k;
    samsa_config_t               cfg;

    (void) state;
    LOAD_OK(&cfg, "num.io.threads", "8");
    k = samsa_config_kraft(&cfg);
    assert_false(k->is_cluster);
    assert_int_equal(k->roles, SAMSA_CONFIG_ROLE_F_BROKER
                               | SAMSA_CONFIG_ROLE_F_CONTROLLER);
    assert_true(cfg.role_broker && cfg.role_controller);
    assert_null(samsa_config_text(&cfg, "process.roles"));
    assert_int_equal(k->node_id, 1);
    assert_int_equal(k->nvoters, 1);
    assert_int_equal(k->voters[0].id, 1);
    assert_string_equal(k->voters[0].addr.host, "localhost");
    assert_int_equal(k->voters[0].addr.port, 9093);
    assert_int_equal(k->nbootstrap_servers, 0);
    assert_string_equal(k->controller_listener_name, "CONTROLLER");
    assert_string_equal(k->inter_broker_listener_name, "PLAINTEXT");
    assert_int_equal(k->broker_heartbeat_interval_ms, 2000);
    assert_int_equal(k->broker_session_timeout_ms, 9000);
    assert_int_equal(k->election_timeout_ms, 1000);
    assert_int_equal(k->fetch_timeout_ms, 2000);
    assert_int_equal(k->max_record_bytes_between_snapshots, 20971520);
    samsa_config_fini(&cfg);

    /* naming itself is fine; the voter is then the one given */
    LOAD_OK(&cfg, "node.id", "4", "controller.quorum.voters",
            "4@127.0.0.1:9093");
    k = samsa_config_kraft(&cfg);
    assert_false(k->is_cluster);
    assert_int_equal(k->nvoters, 1);
    assert_int_equal(k->voters[0].id, 4);
    assert_string_equal(k->voters[0].addr.host, "127.0.0.1");
    samsa_config_fini(&cfg);

    /* another node needs cluster mode */
    LOAD_BAD(("invalid value '1@localhost:9093,2@b:9093' for configuration "
              "'controller.quorum.voters'", "'2@b:9093' is not this node",
              "needs process.roles set"),
             "controller.quorum.voters", "1@localhost:9093,2@b:9093");
}

/* ---- cluster mode ------------------------------------------------------- */

static void
test_kraft_cluster_combined(void **state)
{
    const samsa_config_kraft_t  *k;
    samsa_config_t               cfg;

    (void) state;
    LOAD_OK(&cfg, "process.roles", "broker,controller", "node.id", "2",
            "controller.quorum.voters", "1@c1:9093,2@c2:9093,3@c3:9093",
            "broker.rack", "r2", "broker.session.timeout.ms", "12000",
            "controller.quorum.election.timeout.ms", "1500");
    k = samsa_config_kraft(&cfg);
    assert_true(k->is_cluster);
    assert_int_equal(k->roles, SAMSA_CONFIG_ROLE_F_BROKER
                               | SAMSA_CONFIG_ROLE_F_CONTROLLER);
    assert_int_equal(k->node_id, 2);
    assert_int_equal(k->nvoters, 3);
    assert_string_equal(k->voters[2].addr.host, "c3");
    assert_true(samsa_config_kraft_is_voter(k, 3));
    assert_false(samsa_config_kraft_is_voter(k, 4));
    assert_int_equal(k->broker_session_timeout_ms, 12000);
    assert_int_equal(k->election_timeout_ms, 1500);
    assert_string_equal(samsa_config_str(&cfg, "broker.rack"), "r2");
    samsa_config_fini(&cfg);

    /* bootstrap servers alone (a dynamic quorum) are enough */
    LOAD_OK(&cfg, "process.roles", "controller,broker", "node.id", "9",
            "controller.quorum.bootstrap.servers", "c1:9093,c2:9093");
    k = samsa_config_kraft(&cfg);
    assert_true(k->is_cluster);
    assert_int_equal(k->nvoters, 0);
    assert_int_equal(k->nbootstrap_servers, 2);
    assert_string_equal(k->bootstrap_servers[1].host, "c2");
    samsa_config_fini(&cfg);

    /* broker.id stands for node.id */
    LOAD_OK(&cfg, "process.roles", "broker,controller", "broker.id", "3",
            "controller.quorum.voters", "3@localhost:9093");
    assert_int_equal(samsa_config_kraft(&cfg)->node_id, 3);
    samsa_config_fini(&cfg);

    LOAD_BAD(("Missing configuration 'node.id' which is required when "
              "'process.roles' is defined"),
             "process.roles", "broker,controller",
             "controller.quorum.voters", "1@localhost:9093");
    LOAD_BAD(("'controller.quorum.voters'", "If using process.roles, either "
              "controller.quorum.bootstrap.servers must contain the set of "
              "bootstrap controllers or controller.quorum.voters must "
              "contain a parseable set of controllers"),
             "process.roles", "broker,controller", "node.id", "1");
    LOAD_BAD(("invalid value '2@c2:9093,3@c3:9093' for configuration "
              "'controller.quorum.voters'", "If process.roles contains the "
              "'controller' role, the node id 1 must be included in the set "
              "of voters controller.quorum.voters=[2, 3]"),
             "process.roles", "broker,controller", "node.id", "1",
             "controller.quorum.voters", "2@c2:9093,3@c3:9093");
    /* a controller: exactly one of the two keys, the message names both */
    LOAD_BAD(("'controller.quorum.voters'", "Only one of "
              "controller.quorum.voters and "
              "controller.quorum.bootstrap.servers should be set on a node "
              "with the 'controller' role"),
             "process.roles", "controller", "node.id", "1",
             "listeners", "CONTROLLER://:9093",
             "controller.listener.names", "CONTROLLER",
             "controller.quorum.voters", "1@c1:9093",
             "controller.quorum.bootstrap.servers", "c1:9093");
    LOAD_BAD(("'controller.quorum.voters'", "controller.quorum.bootstrap."
              "servers must contain the set of bootstrap controllers or "
              "controller.quorum.voters must contain a parseable set of "
              "controllers"),
             "process.roles", "controller", "node.id", "1",
             "listeners", "CONTROLLER://:9093",
             "controller.listener.names", "CONTROLLER");
    LOAD_OK(&cfg, "process.roles", "controller", "node.id", "4",
            "listeners", "CONTROLLER://:9093",
            "controller.listener.names", "CONTROLLER",
            "controller.quorum.bootstrap.servers", "c1:9093");
    assert_true(samsa_config_kraft(&cfg)->dynamic);
    samsa_config_fini(&cfg);
    LOAD_OK(&cfg, "process.roles", "controller", "node.id", "1",
            "listeners", "CONTROLLER://:9093",
            "controller.listener.names", "CONTROLLER",
            "controller.quorum.voters", "1@c1:9093");
    assert_false(samsa_config_kraft(&cfg)->dynamic);
    samsa_config_fini(&cfg);
    LOAD_BAD(("'controller.quorum.voters'", "'1@c1' is not of the form "
              "{id}@{host}:{port}", ORIGIN),
             "process.roles", "broker,controller", "node.id", "1",
             "controller.quorum.voters", "1@c1");
    LOAD_BAD(("'controller.quorum.bootstrap.servers'", "'c1': missing ':'"),
             "process.roles", "broker,controller", "node.id", "1",
             "controller.quorum.bootstrap.servers", "c1");
    LOAD_BAD(("'broker.session.timeout.ms'", "at least 1"),
             "broker.session.timeout.ms", "0");
    LOAD_BAD(("'broker.heartbeat.interval.ms'", "not a number"),
             "broker.heartbeat.interval.ms", "2s");
    LOAD_BAD(("'controller.quorum.fetch.timeout.ms'", "at least 1"),
             "controller.quorum.fetch.timeout.ms", "-5");
    LOAD_BAD(("'process.roles'", "'zookeeper' is not one of: broker, "
              "controller"), "process.roles", "zookeeper");
}

static void
test_kraft_cluster_broker_only(void **state)
{
    const samsa_config_kraft_t  *k;
    samsa_config_t               cfg;

    (void) state;
    LOAD_OK(&cfg, "process.roles", "broker", "node.id", "4",
            "controller.quorum.voters", "1@c1:9093,2@c2:9093",
            "listeners", "PLAINTEXT://:9092");
    k = samsa_config_kraft(&cfg);
    assert_true(k->is_cluster);
    assert_int_equal(k->roles, SAMSA_CONFIG_ROLE_F_BROKER);
    assert_true(cfg.role_broker && !cfg.role_controller);
    assert_string_equal(k->controller_listener_name, "CONTROLLER");
    assert_string_equal(k->inter_broker_listener_name, "PLAINTEXT");
    samsa_config_fini(&cfg);

    LOAD_BAD(("If process.roles contains just the 'broker' role, the node "
              "id 1 must not be included in the set of voters "
              "controller.quorum.voters=[1, 2]"),
             "process.roles", "broker", "node.id", "1",
             "controller.quorum.voters", "1@c1:9093,2@c2:9093",
             "listeners", "PLAINTEXT://:9092");
    LOAD_BAD(("'controller.listener.names'", "controller.listener.names "
              "must not contain a value appearing in the 'listeners' "
              "configuration when running KRaft with just the broker role"),
             "process.roles", "broker", "node.id", "4",
             "controller.quorum.voters", "1@c1:9093");
    LOAD_BAD(("controller.listener.names must contain at least one value "
              "when running KRaft with just the broker role"),
             "process.roles", "broker", "node.id", "4",
             "controller.quorum.voters", "1@c1:9093",
             "listeners", "PLAINTEXT://:9092", "controller.listener.names",
             "");
    LOAD_BAD(("controller listener with name 'CTL' defined in "
              "controller.listener.names not found in "
              "listener.security.protocol.map"),
             "process.roles", "broker", "node.id", "4",
             "controller.quorum.voters", "1@c1:9093",
             "listeners", "PLAINTEXT://:9092", "controller.listener.names",
             "CTL");
    /* a controller-only node serves only controller listeners */
    LOAD_BAD(("every listener must be a controller listener"),
             "process.roles", "controller", "node.id", "1",
             "controller.quorum.voters", "1@c1:9093");
    LOAD_OK(&cfg, "process.roles", "controller", "node.id", "1",
            "controller.quorum.voters", "1@c1:9093,2@c2:9093",
            "listeners", "CONTROLLER://:9093");
    k = samsa_config_kraft(&cfg);
    assert_int_equal(k->roles, SAMSA_CONFIG_ROLE_F_CONTROLLER);
    assert_null(k->inter_broker_listener_name);
    samsa_config_fini(&cfg);
}

static void
test_kraft_inter_broker_listener(void **state)
{
    samsa_config_t  cfg;

    (void) state;
    LOAD_OK(&cfg, "listeners",
            "PLAINTEXT://:9092,internal://:9094,CONTROLLER://:9093",
            "listener.security.protocol.map",
            "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "advertised.listeners",
            "PLAINTEXT://h:9092,INTERNAL://h:9094",
            "inter.broker.listener.name", "internal");
    assert_string_equal(samsa_config_kraft(&cfg)->inter_broker_listener_name,
                        "INTERNAL");
    samsa_config_fini(&cfg);

    LOAD_BAD(("invalid value 'FOO' for configuration "
              "'inter.broker.listener.name'", "inter.broker.listener.name "
              "must be a listener name defined in advertised.listeners. The "
              "valid options based on currently configured listeners are "
              "PLAINTEXT"), "inter.broker.listener.name", "FOO");
    LOAD_BAD(("'inter.broker.listener.name'", "'CONTROLLER' is a controller "
              "listener"), "inter.broker.listener.name", "CONTROLLER");
    LOAD_BAD(("'inter.broker.listener.name'", "Only one of "
              "inter.broker.listener.name and security.inter.broker.protocol "
              "should be set"), "inter.broker.listener.name", "PLAINTEXT",
             "security.inter.broker.protocol", "PLAINTEXT");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kraft_voters_parse),
        cmocka_unit_test(test_kraft_hostports_parse),
        cmocka_unit_test(test_kraft_single_node_default),
        cmocka_unit_test(test_kraft_cluster_combined),
        cmocka_unit_test(test_kraft_cluster_broker_only),
        cmocka_unit_test(test_kraft_inter_broker_listener),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
