/*
 * util/err.c - names and texts of samsa_err_t, generated from errors.def.
 * Threads: any; only the fallback buffer is per thread.
 */
#include <samsa/errors.h>

#include <stdio.h>

const char *
samsa_err_name(samsa_err_t err)
{
    static __thread char  buf[32];

    switch (err) {
#define SAMSA_ERR_ROW(name, code, text) \
    case SAMSA_ERR_##name:              \
        return #name;
#include <samsa/errors.def>
#undef SAMSA_ERR_ROW
    }
    snprintf(buf, sizeof(buf), "UNKNOWN_CODE_%d", (int) err);
    return buf;
}

const char *
samsa_err_text(samsa_err_t err)
{
    switch (err) {
#define SAMSA_ERR_ROW(name, code, text) \
    case SAMSA_ERR_##name:              \
        return text;
#include <samsa/errors.def>
#undef SAMSA_ERR_ROW
    }
    return "unknown error code";
}
