/*
 * samsa/errors.h - the one error enum shared by broker, client and CLI.
 * Codes >= -1 are Kafka's wire codes; codes in [-1999, -1000] are local.
 * Threads: everything here is const data or pure functions; any thread.
 */
#ifndef SAMSA_ERRORS_H
#define SAMSA_ERRORS_H

#ifdef __cplusplus
extern "C" {
#endif

#ifndef SAMSA_API
#define SAMSA_API __attribute__((visibility("default")))
#endif

/* Marks a function whose error result the caller must look at. */
#define SAMSA_MUST_CHECK __attribute__((warn_unused_result))

typedef enum samsa_err {
#define SAMSA_ERR_ROW(name, code, text) SAMSA_ERR_##name = (code),
#include <samsa/errors.def>
#undef SAMSA_ERR_ROW
} samsa_err_t;

/* Kafka's name of err ("UNKNOWN_TOPIC_OR_PARTITION"), or "UNKNOWN_CODE_<n>"
 * written into a static per-thread buffer for codes we do not know. */
SAMSA_API const char *samsa_err_name(samsa_err_t err);

/* A one-sentence human description of err. */
SAMSA_API const char *samsa_err_text(samsa_err_t err);

#ifdef __cplusplus
}
#endif

#endif /* SAMSA_ERRORS_H */
