/*
 * broker/brokerlog.c - see brokerlog.h.
 */
#include "broker/brokerlog.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/diag.h"

/* The messages of the answers: printf into the request's arena. */
#define brokerlog_msg  samsa_arena_printf

static const char *const  brokerlog_op_names[] = {
    "SET", "DELETE", "APPEND", "SUBTRACT",
};

size_t
samsa_brokerlog_count(void)
{
    return SAMSA_DIAG_NLOGGERS;
}

const char *
samsa_brokerlog_name(size_t i)
{
    return samsa_diag_logger_name((samsa_diag_logger_t) i);
}

const char *
samsa_brokerlog_level(size_t i)
{
    return samsa_diag_level_name(
        samsa_diag_logger_level((samsa_diag_logger_t) i));
}

/* Java's Integer.parseInt of a resource name. */
static bool
brokerlog_parse_id(samsa_slice_t name, int32_t *out)
{
    char        buf[16];
    char       *end;
    long long   v;

    if (name.ptr == NULL || name.len == 0 || name.len >= sizeof(buf)) {
        return false;
    }
    memcpy(buf, name.ptr, name.len);
    buf[name.len] = '\0';
    if (buf[0] == ' ' || (buf[0] != '-' && buf[0] != '+'
                          && (buf[0] < '0' || buf[0] > '9'))) {
        return false;
    }
    errno = 0;
    v = strtoll(buf, &end, 10);
    if (*end != '\0' || end == buf || errno != 0 || v < INT32_MIN
        || v > INT32_MAX) {
        return false;
    }
    *out = (int32_t) v;
    return true;
}

samsa_err_t
samsa_brokerlog_describe_check(int32_t node_id, samsa_slice_t name,
                               samsa_arena_t *arena, const char **message)
{
    int32_t  id;

    if (name.ptr == NULL || name.len == 0) {
        *message = "Broker id must not be empty";
        return SAMSA_ERR_INVALID_REQUEST;
    }
    if (!brokerlog_parse_id(name, &id)) {
        *message = brokerlog_msg(arena, "Broker id must be an integer, but "
                                 "it is: %.*s", (int) name.len, name.ptr);
        return SAMSA_ERR_INVALID_REQUEST;
    }
    if (id != node_id) {
        *message = brokerlog_msg(arena, "Unexpected broker id, expected %d "
                                 "but received %.*s", (int) node_id,
                                 (int) name.len, name.ptr);
        return SAMSA_ERR_INVALID_REQUEST;
    }
    *message = NULL;
    return SAMSA_ERR_NONE;
}

static void
brokerlog_fail(samsa_controller_result_t *r, samsa_err_t err,
               const char *message)
{
    r->error = err;
    r->message = message;
}

/* Kafka's checks before the logger ops: duplicate keys, null values, the
 * node id (validateResourceNameIsCurrentNodeId). */
static bool
brokerlog_check_request(int32_t node_id, samsa_slice_t name,
                        const samsa_controller_config_op_t *ops, size_t nops,
                        samsa_arena_t *arena, samsa_controller_result_t *r)
{
    size_t   i, j, o = 0, cap = 64;
    char    *nulls;
    int32_t  id;

    for (i = 0; i < nops; i++) {
        for (j = 0; j < i; j++) {
            if (ops[i].name != NULL && ops[j].name != NULL
                && strcmp(ops[i].name, ops[j].name) == 0) {
                brokerlog_fail(r, SAMSA_ERR_INVALID_REQUEST,
                               "Error due to duplicate config keys");
                return false;
            }
        }
        if (ops[i].op != SAMSA_CONFIG_OP_DELETE && ops[i].value == NULL) {
            cap += strlen(ops[i].name != NULL ? ops[i].name : "null") + 2;
        }
    }
    nulls = samsa_arena_alloc(arena, cap);
    nulls[0] = '\0';
    for (i = 0; i < nops; i++) {
        if (ops[i].op != SAMSA_CONFIG_OP_DELETE && ops[i].value == NULL) {
            o += (size_t) snprintf(nulls + o, cap - o, "%s%s",
                                   o > 0 ? ", " : "",
                                   ops[i].name != NULL ? ops[i].name
                                                       : "null");
        }
    }
    if (o > 0) {
        brokerlog_fail(r, SAMSA_ERR_INVALID_REQUEST,
                       brokerlog_msg(arena, "Null value not supported for "
                                     ": %s", nulls));
        return false;
    }
    if (!brokerlog_parse_id(name, &id)) {
        brokerlog_fail(r, SAMSA_ERR_INVALID_REQUEST,
                       brokerlog_msg(arena, "Node id must be an integer, but "
                                     "it is: %.*s", (int) name.len,
                                     name.ptr != NULL ? name.ptr : ""));
        return false;
    }
    if (id != node_id) {
        brokerlog_fail(r, SAMSA_ERR_INVALID_REQUEST,
                       brokerlog_msg(arena, "Unexpected broker id, expected "
                                     "%d, but received %.*s", (int) node_id,
                                     (int) name.len, name.ptr));
        return false;
    }
    return true;
}

/* ConfigAdminManager.validateLogLevelConfigs, op by op. */
static bool
brokerlog_check_op(const samsa_controller_config_op_t *op,
                   samsa_arena_t *arena, samsa_controller_result_t *r)
{
    const char           *name = op->name != NULL ? op->name : "null";
    samsa_diag_logger_t   lg;
    size_t                i;

    if (op->op == SAMSA_CONFIG_OP_APPEND
        || op->op == SAMSA_CONFIG_OP_SUBTRACT) {
        brokerlog_fail(r, SAMSA_ERR_INVALID_REQUEST,
                       brokerlog_msg(arena, "%s operation is not allowed "
                                     "for the BROKER_LOGGER resource",
                                     brokerlog_op_names[op->op]));
        return false;
    }
    if (op->op != SAMSA_CONFIG_OP_SET && op->op != SAMSA_CONFIG_OP_DELETE) {
        brokerlog_fail(r, SAMSA_ERR_INVALID_REQUEST,
                       brokerlog_msg(arena, "Unknown operation type %d is "
                                     "not allowed for the BROKER_LOGGER "
                                     "resource", (int) op->op));
        return false;
    }
    if (!samsa_diag_logger_find(name, &lg)) {
        brokerlog_fail(r, SAMSA_ERR_INVALID_CONFIG,
                       brokerlog_msg(arena, "Logger %s does not exist!",
                                     name));
        return false;
    }
    if (op->op == SAMSA_CONFIG_OP_DELETE) {
        if (lg != SAMSA_DIAG_LOGGER_ROOT) {
            return true;
        }
        brokerlog_fail(r, SAMSA_ERR_INVALID_REQUEST,
                       "Removing the log level of the root logger is not "
                       "allowed");
        return false;
    }
    /* LogLevelConfig.VALID_LOG_LEVELS, matched case-sensitively as
     * Kafka's Set.contains does */
    for (i = SAMSA_DIAG_FATAL; i <= SAMSA_DIAG_TRACE; i++) {
        if (strcmp(op->value,
                   samsa_diag_level_name((samsa_diag_level_t) i)) == 0) {
            return true;
        }
    }
    brokerlog_fail(r, SAMSA_ERR_INVALID_CONFIG,
                   brokerlog_msg(arena, "Cannot set the log level of %s to "
                                 "%s as it is not a supported log level. "
                                 "Valid log levels are FATAL, ERROR, WARN, "
                                 "INFO, DEBUG, TRACE", name, op->value));
    return false;
}

void
samsa_brokerlog_alter(int32_t node_id, samsa_slice_t name,
                      const samsa_controller_config_op_t *ops, size_t nops,
                      bool validate_only, samsa_arena_t *arena,
                      samsa_controller_result_t *r)
{
    samsa_diag_level_t   level = SAMSA_DIAG_INFO;
    samsa_diag_logger_t  lg;
    bool                 unset;
    char                 errbuf[512];
    size_t               i;

    memset(r, 0, sizeof(*r));
    if (!brokerlog_check_request(node_id, name, ops, nops, arena, r)) {
        return;
    }
    for (i = 0; i < nops; i++) {
        if (!brokerlog_check_op(&ops[i], arena, r)) {
            return;
        }
    }
    for (i = 0; i < nops && !validate_only; i++) {
        /* checked above: a logger that exists; SET to one of log4j's
         * names, or DELETE of one that is not root (Kafka's
         * unsetLogLevel: it follows root again) */
        unset = ops[i].op == SAMSA_CONFIG_OP_DELETE;
        if (!samsa_diag_logger_find(ops[i].name, &lg)
            || (!unset && !samsa_diag_level_parse(ops[i].value, &level))) {
            continue;
        }
        if (!samsa_diag_logger_update(lg, unset, level, errbuf,
                                      sizeof(errbuf))) {
            brokerlog_fail(r, SAMSA_ERR_INVALID_CONFIG,
                           brokerlog_msg(arena, "Cannot set the log level "
                                         "of %s: %s", ops[i].name, errbuf));
            return;
        }
        if (unset) {
            samsa_info("Unset the log level of %s: it follows root (%s)",
                       ops[i].name, samsa_diag_level_name(
                                        samsa_diag_logger_level(lg)));
        } else {
            samsa_info("Updating the log level of %s to %s", ops[i].name,
                       ops[i].value);
        }
    }
}
