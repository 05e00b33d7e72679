/*
 * libFuzzer target: `format --add-scram`'s argument parser and the
 * bootstrap.scram reader (meta/bootscram.c), which read an operator's
 * text.  The first byte picks which: even, the rest is one argument (any
 * result parses into a named credential within Kafka's iteration bounds,
 * or fails with a reason); odd, the rest is the file's content (read into
 * credentials each with a name and keys, or refused with a reason naming
 * the file).  Never a crash.
 */
#include "fuzz.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "meta/bootscram.h"
#include "util/alloc.h"
#include "util/fsutil.h"

static char  fuzz_dir[64];

static void
fuzz_cleanup(void)
{
    char  file[128];

    snprintf(file, sizeof(file), "%s/" SAMSA_BOOTSCRAM_FILE, fuzz_dir);
    (void) unlink(file);
    (void) rmdir(fuzz_dir);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    samsa_bootscram_t   one, *creds = NULL;
    char                why[512], file[128];
    char               *text;
    size_t              n = 0, i;
    samsa_err_t         err;
    int                 fd;

    if (size == 0) {
        return 0;
    }
    why[0] = '\0';
    if ((data[0] & 1) == 0) {
        text = samsa_malloc(size);
        memcpy(text, data + 1, size - 1);
        text[size - 1] = '\0';
        if (strlen(text) != size - 1 || size > 4096) {
            samsa_free(text);       /* an argument holds no NUL */
            return 0;
        }
        err = samsa_bootscram_parse(text, &one, why, sizeof(why));
        if (err == SAMSA_ERR_NONE) {
            fuzz_require(one.name != NULL);
            fuzz_require(one.cred.iterations >= SAMSA_SCRAM_MIN_ITERATIONS
                         && one.cred.iterations <= SAMSA_SCRAM_MAX_ITERATIONS);
            fuzz_require(one.cred.salt_len > 0);
            samsa_free(one.name);
        } else {
            fuzz_require(why[0] != '\0');
        }
        samsa_free(text);
        return 0;
    }
    if (fuzz_dir[0] == '\0') {
        snprintf(fuzz_dir, sizeof(fuzz_dir), "/tmp/fuzz_bootscram.%d",
                 (int) getpid());
        fuzz_require(samsa_mkdirs(fuzz_dir) == 0);
        atexit(fuzz_cleanup);
    }
    snprintf(file, sizeof(file), "%s/" SAMSA_BOOTSCRAM_FILE, fuzz_dir);
    fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    fuzz_require(fd >= 0);
    fuzz_require(samsa_write_all(fd, data + 1, size - 1, 0) == 0);
    close(fd);
    err = samsa_bootscram_read(fuzz_dir, &creds, &n, why, sizeof(why));
    if (err == SAMSA_ERR_NONE) {
        for (i = 0; i < n; i++) {
            fuzz_require(creds[i].name != NULL && creds[i].name[0] != '\0');
            fuzz_require(creds[i].cred.salt_len > 0);
        }
    } else {
        fuzz_require(why[0] != '\0' && strstr(why, file) != NULL);
        fuzz_require(creds == NULL && n == 0);
    }
    samsa_bootscram_free(creds, n);
    return 0;
}
