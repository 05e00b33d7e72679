/*
 * meta/bootscram.h - SCRAM credentials a new cluster starts with
 * (`samsa-server format --add-scram`, Kafka's kafka-storage format
 * --add-scram, KIP-900): parsed from Kafka's argument syntax
 * `SCRAM-SHA-256=[name=alice,password=alice-secret]` (or iterations=N,
 * salt=<base64>, saltedpassword=<base64> with salt), turned into what a
 * UserScramCredentialRecord holds (salt, StoredKey, ServerKey,
 * iterations; never the password), kept in <metadata dir>/bootstrap.scram
 * and written by the controller that bootstraps the metadata log, after
 * its metadata.version record, as Kafka's bootstrap checkpoint carries
 * them.
 * Threads: format's main, and the controller's open.
 * Ownership: the caller owns what read returns (samsa_bootscram_free).
 */
#ifndef SAMSA_META_BOOTSCRAM_H
#define SAMSA_META_BOOTSCRAM_H

#include <stddef.h>
#include <stdint.h>

#include <samsa/errors.h>

#include "net/scram.h"

#define SAMSA_BOOTSCRAM_FILE "bootstrap.scram"

typedef struct samsa_bootscram {
    char                *name;          /* the user */
    samsa_scram_cred_t   cred;          /* mechanism, salt, keys,
                                           iterations */
} samsa_bootscram_t;

/* One --add-scram argument to *out (out->name: samsa_free it).
 * SAMSA_ERR__CONFIG with Kafka's message in errstr: no '=', an unknown
 * mechanism, no [ ], a component without '=', no name, neither password
 * nor saltedpassword, saltedpassword without salt, bad base64, an
 * iteration count outside 4096..16384, an unknown component. */
SAMSA_MUST_CHECK samsa_err_t samsa_bootscram_parse(const char *arg,
                                                   samsa_bootscram_t *out,
                                                   char *errstr,
                                                   size_t errstr_size);

/* Write mdir/bootstrap.scram (atomically replaced, mode 0600): the n
 * credentials.  SAMSA_ERR__IO naming the file. */
SAMSA_MUST_CHECK samsa_err_t samsa_bootscram_write(
    const char *mdir, const samsa_bootscram_t *creds, size_t n,
    char *errstr, size_t errstr_size);

/* Read mdir/bootstrap.scram: *creds (samsa_bootscram_free), *n.  A
 * missing file is SAMSA_ERR__NOENT; a bad entry SAMSA_ERR__CONFIG naming
 * the file and the entry. */
SAMSA_MUST_CHECK samsa_err_t samsa_bootscram_read(
    const char *mdir, samsa_bootscram_t **creds, size_t *n,
    char *errstr, size_t errstr_size);

void samsa_bootscram_free(samsa_bootscram_t *creds, size_t n);

#endif /* SAMSA_META_BOOTSCRAM_H */
