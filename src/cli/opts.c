/*
 * cli/opts.c - flag parsing for the samsa tool (see opts.h).
 * Threads: main.
 */
#include "cli/opts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const samsa_opt_t  samsa_opts_common[] = {
    { "--bootstrap-server", 'b', SAMSA_OPT_VALUE, "HOST:PORT[,...]",
      "brokers to start from (default: $SAMSA_BOOTSTRAP)" },
    { "--command-config", 0, SAMSA_OPT_VALUE, "FILE",
      "client properties file (Java client names)" },
    { "--timeout", 0, SAMSA_OPT_VALUE, "MS",
      "time limit of each operation (default 30000)" },
    { "--connect-timeout", 0, SAMSA_OPT_VALUE, "MS",
      "give up reaching the cluster after this (default 5000)" },
    { "--json", 0, SAMSA_OPT_FLAG, NULL, "machine-readable output" },
    { "--verbose", 'v', SAMSA_OPT_FLAG, NULL, "client diagnostics on stderr" },
    { "--help", 'h', SAMSA_OPT_FLAG, NULL, "this help" },
    { NULL, 0, SAMSA_OPT_FLAG, NULL, NULL },
};

static size_t
opts_count(const samsa_opt_t *spec)
{
    size_t  n = 0;

    while (spec != NULL && spec[n].name != NULL) {
        n++;
    }
    return n;
}

static const samsa_opt_t *
opts_at(const samsa_opts_t *o, size_t i)
{
    return i < o->nspec ? &o->spec[i] : &samsa_opts_common[i - o->nspec];
}

static size_t
opts_total(const samsa_opts_t *o)
{
    return o->nspec + opts_count(samsa_opts_common);
}

/* Index of the flag called name (long "--x" or short "-x"), or -1. */
static long
opts_find(const samsa_opts_t *o, const char *name, size_t len)
{
    const samsa_opt_t  *s;
    size_t              i;

    for (i = 0; i < opts_total(o); i++) {
        s = opts_at(o, i);
        if (len == 2 && name[0] == '-' && name[1] != '-'
            && s->short_name != 0 && name[1] == s->short_name) {
            return (long) i;
        }
        if (strlen(s->name) == len && strncmp(s->name, name, len) == 0) {
            return (long) i;
        }
    }
    return -1;
}

static void
opts_set(samsa_opts_t *o, size_t i, const char *v)
{
    o->value[i] = v;
    if (opts_at(o, i)->kind == SAMSA_OPT_MULTI) {
        o->multi[i] = realloc(o->multi[i],
                              (o->nmulti[i] + 1) * sizeof(char *));
        o->multi[i][o->nmulti[i]++] = v;
    }
}

int
samsa_opts_parse(samsa_opts_t *o, const samsa_opt_t *spec, int argc,
                 char **argv, char *err, size_t err_size)
{
    const samsa_opt_t  *s;
    const char         *a, *eq;
    size_t              total, len;
    long                k;
    int                 i;
    bool                only_pos = false;

    memset(o, 0, sizeof(*o));
    o->spec = spec;
    o->nspec = opts_count(spec);
    total = opts_total(o);
    o->value = calloc(total + 1, sizeof(*o->value));
    o->multi = calloc(total + 1, sizeof(*o->multi));
    o->nmulti = calloc(total + 1, sizeof(*o->nmulti));
    o->pos = calloc((size_t) argc + 1, sizeof(*o->pos));
    for (i = 0; i < argc; i++) {
        a = argv[i];
        if (only_pos || a[0] != '-' || a[1] == '\0') {
            o->pos[o->npos++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_pos = true;
            continue;
        }
        eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        len = eq != NULL ? (size_t) (eq - a) : strlen(a);
        k = opts_find(o, a, len);
        if (k < 0) {
            snprintf(err, err_size, "unknown option '%.*s'", (int) len, a);
            return -1;
        }
        s = opts_at(o, (size_t) k);
        if (s->kind == SAMSA_OPT_FLAG) {
            if (eq != NULL) {
                snprintf(err, err_size, "option '%s' takes no value",
                         s->name);
                return -1;
            }
            opts_set(o, (size_t) k, "");
            continue;
        }
        if (eq != NULL) {
            opts_set(o, (size_t) k, eq + 1);
        } else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
            opts_set(o, (size_t) k, argv[++i]);     /* "-1" is a value */
        } else {
            snprintf(err, err_size, "option '%s' needs a value (%s)",
                     s->name, s->metavar != NULL ? s->metavar : "VALUE");
            return -1;
        }
    }
    return 0;
}

void
samsa_opts_fini(samsa_opts_t *o)
{
    size_t  i;

    if (o->multi != NULL) {
        for (i = 0; i < opts_total(o); i++) {
            free(o->multi[i]);
        }
    }
    free(o->value);
    free(o->multi);
    free(o->nmulti);
    free(o->pos);
    memset(o, 0, sizeof(*o));
}

bool
samsa_opts_has(const samsa_opts_t *o, const char *name)
{
    return samsa_opts_get(o, name) != NULL;
}

const char *
samsa_opts_get(const samsa_opts_t *o, const char *name)
{
    long  k = opts_find(o, name, strlen(name));

    return k >= 0 ? o->value[k] : NULL;
}

const char *const *
samsa_opts_all(const samsa_opts_t *o, const char *name, size_t *n)
{
    long  k = opts_find(o, name, strlen(name));

    *n = k >= 0 ? o->nmulti[k] : 0;
    return k >= 0 ? o->multi[k] : NULL;
}

int
samsa_opts_parse_i64(const char *flag, const char *text, int64_t min,
                     int64_t max, int64_t *v, char *err, size_t err_size)
{
    char       *end;
    long long   x;

    errno = 0;
    x = strtoll(text, &end, 10);
    if (text[0] == '\0' || *end != '\0' || errno != 0) {
        snprintf(err, err_size, "invalid value '%s' for %s: not a number",
                 text, flag);
        return -1;
    }
    if (x < min || x > max) {
        snprintf(err, err_size, "invalid value '%s' for %s: must be between "
                 "%lld and %lld", text, flag, (long long) min,
                 (long long) max);
        return -1;
    }
    *v = x;
    return 0;
}

int
samsa_opts_i64(const samsa_opts_t *o, const char *flag, int64_t min,
               int64_t max, int64_t dflt, int64_t *v, char *err,
               size_t err_size)
{
    const char  *text = samsa_opts_get(o, flag);

    if (text == NULL) {
        *v = dflt;
        return 0;
    }
    return samsa_opts_parse_i64(flag, text, min, max, v, err, err_size);
}

int
samsa_opts_kv(const char *flag, const char *kv, char **key,
              const char **value, char *err, size_t err_size)
{
    const char  *eq = strchr(kv, '=');

    if (eq == NULL || eq == kv) {
        snprintf(err, err_size, "invalid value '%s' for %s: expected "
                 "key=value", kv, flag);
        return -1;
    }
    *key = strndup(kv, (size_t) (eq - kv));
    *value = eq + 1;
    return 0;
}

/* n digits at *p as a number in [lo, hi]; advances *p. */
static bool
opts_digits(const char **p, int n, int lo, int hi, int *v)
{
    int  i;

    *v = 0;
    for (i = 0; i < n; i++) {
        if ((*p)[i] < '0' || (*p)[i] > '9') {
            return false;
        }
        *v = *v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    return *v >= lo && *v <= hi;
}

static bool
opts_datetime(const char *p, int64_t *ms)
{
    struct tm  tm;
    int        y, mo, d, h = 0, mi = 0, sec = 0, frac = 0, zh, zm, i;
    int64_t    off = 0, sign;

    memset(&tm, 0, sizeof(tm));
    if (!opts_digits(&p, 4, 1970, 9999, &y) || *p++ != '-'
        || !opts_digits(&p, 2, 1, 12, &mo) || *p++ != '-'
        || !opts_digits(&p, 2, 1, 31, &d)) {
        return false;
    }
    if (*p == 'T' || *p == ' ') {
        p++;
        if (!opts_digits(&p, 2, 0, 23, &h) || *p++ != ':'
            || !opts_digits(&p, 2, 0, 59, &mi)) {
            return false;
        }
        if (*p == ':') {
            p++;
            if (!opts_digits(&p, 2, 0, 60, &sec)) {
                return false;
            }
            if (*p == '.') {
                p++;
                for (i = 0; i < 3 && *p >= '0' && *p <= '9'; i++, p++) {
                    frac = frac * 10 + (*p - '0');
                }
                for (; i < 3; i++) {
                    frac *= 10;
                }
                while (*p >= '0' && *p <= '9') {
                    p++;                /* finer than ms: dropped */
                }
            }
        }
    }
    if (*p == 'Z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        sign = *p++ == '+' ? 1 : -1;
        if (!opts_digits(&p, 2, 0, 18, &zh)) {
            return false;
        }
        if (*p == ':') {
            p++;
        }
        if (!opts_digits(&p, 2, 0, 59, &zm)) {
            return false;
        }
        off = sign * ((int64_t) zh * 3600 + zm * 60);
    }
    if (*p != '\0') {
        return false;
    }
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    *ms = ((int64_t) timegm(&tm) - off) * 1000 + frac;
    return true;
}

int
samsa_opts_parse_datetime(const char *flag, const char *text, int64_t *ms,
                          char *err, size_t err_size)
{
    if (!opts_datetime(text, ms)) {
        snprintf(err, err_size, "invalid value '%s' for %s: expected "
                 "YYYY-MM-DDTHH:MM:SS[.sss][Z|+HH:MM]", text, flag);
        return -1;
    }
    return 0;
}

int
samsa_opts_parse_topic_parts(const char *flag, const char *text,
                             char **topic, int32_t **parts, size_t *nparts,
                             char *err, size_t err_size)
{
    const char  *colon = strrchr(text, ':'), *p;
    char        *end;
    long         v;

    *topic = NULL;
    *parts = NULL;
    *nparts = 0;
    if (text[0] == '\0' || colon == text) {
        snprintf(err, err_size, "invalid value '%s' for %s: expected "
                 "TOPIC or TOPIC:P,P,...", text, flag);
        return -1;
    }
    if (colon == NULL) {
        *topic = strdup(text);
        return 0;
    }
    *parts = calloc(strlen(colon) + 1, sizeof(int32_t));
    for (p = colon + 1;; p = end + 1) {
        errno = 0;
        v = strtol(p, &end, 10);
        if (end == p || errno != 0 || v < 0 || v > INT32_MAX
            || (*end != ',' && *end != '\0')) {
            snprintf(err, err_size, "invalid value '%s' for %s: bad "
                     "partition list after ':'", text, flag);
            free(*parts);
            *parts = NULL;
            *nparts = 0;
            return -1;
        }
        (*parts)[(*nparts)++] = (int32_t) v;
        if (*end == '\0') {
            break;
        }
    }
    *topic = strndup(text, (size_t) (colon - text));
    return 0;
}

int
samsa_opts_client_conf(const samsa_opts_t *o, samsa_conf_t *conf, char *err,
                       size_t err_size)
{
    const char  *file = samsa_opts_get(o, "--command-config");
    const char  *bs = samsa_opts_get(o, "--bootstrap-server");
    char         why[512];

    if (file != NULL
        && samsa_conf_load_file(conf, file, why, sizeof(why))
               != SAMSA_ERR_NONE) {
        snprintf(err, err_size, "--command-config: %s", why);
        return -1;
    }
    if (bs == NULL && samsa_conf_get(conf, "bootstrap.servers") == NULL) {
        bs = getenv("SAMSA_BOOTSTRAP");
    }
    if (bs != NULL && samsa_conf_set(conf, "bootstrap.servers", bs, why,
                                     sizeof(why)) != SAMSA_ERR_NONE) {
        snprintf(err, err_size, "--bootstrap-server: %s", why);
        return -1;
    }
    if (samsa_conf_get(conf, "bootstrap.servers") == NULL
        || samsa_conf_get(conf, "bootstrap.servers")[0] == '\0') {
        snprintf(err, err_size, "no broker to connect to: give "
                 "-b/--bootstrap-server HOST:PORT or set SAMSA_BOOTSTRAP");
        return -1;
    }
    return 0;
}

static void
opts_usage_table(FILE *out, const samsa_opt_t *spec)
{
    char    left[96], shrt[8] = "";
    size_t  i;

    for (i = 0; spec[i].name != NULL; i++) {
        shrt[0] = '\0';
        if (spec[i].short_name != 0) {
            snprintf(shrt, sizeof(shrt), "-%c, ", spec[i].short_name);
        }
        snprintf(left, sizeof(left), "%s%s%s%s%s", shrt, spec[i].name,
                 spec[i].metavar != NULL ? " " : "",
                 spec[i].metavar != NULL ? spec[i].metavar : "",
                 spec[i].kind == SAMSA_OPT_MULTI ? " ..." : "");
        if (strlen(left) > 34) {
            fprintf(out, "  %s\n  %-34s %s\n", left, "", spec[i].help);
        } else {
            fprintf(out, "  %-34s %s\n", left, spec[i].help);
        }
    }
}

void
samsa_opts_usage(FILE *out, const char *synopsis, const char *about,
                 const samsa_opt_t *spec, bool with_common)
{
    fprintf(out, "usage: %s\n", synopsis);
    if (about != NULL) {
        fprintf(out, "\n%s\n", about);
    }
    if (spec != NULL && spec[0].name != NULL) {
        fprintf(out, "\noptions:\n");
        opts_usage_table(out, spec);
    }
    if (with_common) {
        fprintf(out, "\ncommon options:\n");
        opts_usage_table(out, samsa_opts_common);
    }
    fprintf(out, "\nexit codes: 0 ok, 1 operation failed, 2 usage error, "
            "3 cannot reach the cluster\n");
}
