/*
 * broker/brokerlog.h - the BROKER_LOGGER config resource (type 8, KIP-412):
 * DescribeConfigs lists this broker's loggers with their levels, and
 * IncrementalAlterConfigs SETs or DELETEs a logger's level, as Kafka's
 * ConfigHelper and ConfigAdminManager do over Log4jController.  The
 * loggers are util/diag.h's: log4j's root ("root", the diagnostics level:
 * diag.level, also POST /loglevel) and Kafka's "kafka.request.logger"
 * (the request log, written at DEBUG or TRACE; request.log.enable at
 * start).  A change is the broker's own, never forwarded to the controller
 * and not persisted (a restart goes back to the configuration), as
 * Kafka's.
 * Threads: any (the levels are util/diag's atomics).
 */
#ifndef SAMSA_BROKER_BROKERLOG_H
#define SAMSA_BROKER_BROKERLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "meta/controller/controller.h"
#include "util/arena.h"
#include "util/slice.h"

#define SAMSA_CONFIG_RESOURCE_BROKER_LOGGER  8

/* The loggers, as Kafka's Log4jController.loggers: names and the level
 * each has now ("INFO"). */
size_t samsa_brokerlog_count(void);
const char *samsa_brokerlog_name(size_t i);
const char *samsa_brokerlog_level(size_t i);

/* DescribeConfigs' check of the resource name against node_id (Kafka's
 * ConfigHelper): SAMSA_ERR_NONE, or INVALID_REQUEST with *message "Broker
 * id must not be empty", "Broker id must be an integer, but it is: x" or
 * "Unexpected broker id, expected 1 but received 2" (in arena). */
SAMSA_MUST_CHECK samsa_err_t samsa_brokerlog_describe_check(
    int32_t node_id, samsa_slice_t name, samsa_arena_t *arena,
    const char **message);

/* One BROKER_LOGGER resource of IncrementalAlterConfigs, checked whole,
 * then applied unless validate_only (Kafka's preprocess): INVALID_REQUEST
 * "Error due to duplicate config keys", "Null value not supported for :
 * a, b", "Node id must be an integer, but it is: x", "Unexpected broker
 * id, expected 1, but received 2", "Removing the log level of the root
 * logger is not allowed" (DELETE of another logger makes it follow root), "APPEND operation is not allowed for the
 * BROKER_LOGGER resource" (SUBTRACT alike), "Unknown operation type 7 is
 * not allowed for the BROKER_LOGGER resource"; INVALID_CONFIG "Logger x
 * does not exist!", "Cannot set the log level of root to LOUD as it is
 * not a supported log level. Valid log levels are FATAL, ERROR, WARN,
 * INFO, DEBUG, TRACE", and "Cannot set the log level of
 * kafka.request.logger: cannot open the request log ..." when a logger's
 * file cannot be opened.  The answer is in *r (message in arena). */
void samsa_brokerlog_alter(int32_t node_id, samsa_slice_t name,
                           const samsa_controller_config_op_t *ops,
                           size_t nops, bool validate_only,
                           samsa_arena_t *arena,
                           samsa_controller_result_t *r);

#endif /* SAMSA_BROKER_BROKERLOG_H */
