/*
 * net/jaas.h - Kafka's sasl.jaas.config value (the JAAS configuration
 * file syntax, one or more login modules):
 *   <class> <flag> [<name>=<value> ...];
 * flag one of required, requisite, sufficient, optional; a value is a
 * double-quoted string (\" and \\ escapes) or a bare word.  Kafka's
 * JaasConfig reads it with a StreamTokenizer; this parser accepts the
 * same shape and refuses anything else with a reason.
 * Threads: stateless, any thread.
 * Ownership: samsa_jaas_t owns its strings; samsa_jaas_fini frees them.
 */
#ifndef SAMSA_NET_JAAS_H
#define SAMSA_NET_JAAS_H

#include <stddef.h>

#include <samsa/errors.h>

typedef struct samsa_jaas_opt {
    char  *name;
    char  *value;
} samsa_jaas_opt_t;

typedef struct samsa_jaas_module {
    char              *class_name;  /* org.apache...PlainLoginModule */
    char              *flag;        /* "required", ... */
    samsa_jaas_opt_t  *opts;
    size_t             nopts;
} samsa_jaas_module_t;

typedef struct samsa_jaas {
    samsa_jaas_module_t  *modules;
    size_t                nmodules;
} samsa_jaas_t;

/* Parse text (len bytes, need not be NUL-terminated) into *out (zeroed
 * first).  SAMSA_ERR__CONFIG with why filled for malformed text, no
 * module, or a module without its ';'.  Call samsa_jaas_fini after any
 * result. */
SAMSA_MUST_CHECK samsa_err_t samsa_jaas_parse(const char *text, size_t len,
                                              samsa_jaas_t *out, char *why,
                                              size_t why_size);

/* The value of option name in module m, or NULL. */
const char *samsa_jaas_opt(const samsa_jaas_module_t *m, const char *name);

void samsa_jaas_fini(samsa_jaas_t *jaas);

#endif /* SAMSA_NET_JAAS_H */
