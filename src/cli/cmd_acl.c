/*
 * cli/cmd_acl.c - "samsa acl add|list|remove": ACL bindings through
 * libsamsa's admin client (CreateAcls, DescribeAcls, DeleteAcls), with
 * kafka-acls' options: --allow-principal / --deny-principal, --allow-host /
 * --deny-host (or --host for both; default "*"), --operation (Kafka's
 * names, any case, "_" optional: Read, DescribeConfigs, ALTER_CONFIGS...;
 * default All), the resources --topic / --group / --transactional-id
 * (repeatable) and --cluster, --resource-pattern-type literal|prefixed
 * (list and remove also any, their default for list: bindings named so;
 * match: also the wildcard and prefixed ones that apply).
 * Threads: main.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <samsa/admin.h>

#include "cli/cli.h"
#include "cli/json.h"
#include "cli/session.h"
#include "cli/table.h"

/* Kafka's codes (include/samsa/admin.h lists them) */
#define ACL_ANY               1
#define ACL_PATTERN_MATCH     2
#define ACL_PATTERN_LITERAL   3
#define ACL_PATTERN_PREFIXED  4
#define ACL_OP_ALL            2
#define ACL_DENY              2
#define ACL_ALLOW             3
#define ACL_TOPIC             2
#define ACL_GROUP             3
#define ACL_CLUSTER           4
#define ACL_TXN_ID            5

static const char *const  acl_resource_names[] = {
    "UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID",
    "DELEGATION_TOKEN", "USER", NULL,
};
static const char *const  acl_pattern_names[] = {
    "UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED", NULL,
};
static const char *const  acl_op_names[] = {
    "UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER",
    "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS",
    "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS",
    "TWO_PHASE_COMMIT", NULL,
};
static const char *const  acl_perm_names[] = {
    "UNKNOWN", "ANY", "DENY", "ALLOW", NULL,
};

static const char *
acl_name(const char *const *names, int8_t code)
{
    int  i;

    for (i = 0; names[i] != NULL; i++) {
        if (i == code) {
            return names[i];
        }
    }
    return "UNKNOWN";
}

/* names' index of text compared without case and '_' (DescribeConfigs,
 * describe_configs, DESCRIBE_CONFIGS), or -1. */
static int
acl_code(const char *const *names, const char *text)
{
    char  a[64], b[64];
    int   i;
    size_t k, n;

    for (k = 0, n = 0; text[k] != '\0' && n + 1 < sizeof(a); k++) {
        if (text[k] != '_' && text[k] != '-') {
            a[n++] = (char) toupper((unsigned char) text[k]);
        }
    }
    a[n] = '\0';
    for (i = 2; names[i] != NULL; i++) {
        for (k = 0, n = 0; names[i][k] != '\0'; k++) {
            if (names[i][k] != '_') {
                b[n++] = names[i][k];
            }
        }
        b[n] = '\0';
        if (strcmp(a, b) == 0) {
            return i;
        }
    }
    if (strcasecmp(text, "any") == 0) {
        return ACL_ANY;
    }
    return -1;
}

/* The resources named by the flags. */
typedef struct acl_res {
    int8_t        type;
    const char   *name;
} acl_res_t;

typedef struct acl_args {
    acl_res_t    *res;
    size_t        nres;
    int8_t        pattern;
    int8_t       *ops;
    size_t        nops;
} acl_args_t;

static const samsa_opt_t  acl_opts[] = {
    { "--topic", 0, SAMSA_OPT_MULTI, "TOPIC", "a topic resource" },
    { "--group", 0, SAMSA_OPT_MULTI, "GROUP", "a group resource" },
    { "--transactional-id", 0, SAMSA_OPT_MULTI, "ID",
      "a transactional id resource" },
    { "--cluster", 0, SAMSA_OPT_FLAG, NULL, "the cluster resource" },
    { "--resource-pattern-type", 0, SAMSA_OPT_VALUE, "TYPE",
      "literal (default) or prefixed; list/remove also any, match" },
    { "--allow-principal", 0, SAMSA_OPT_MULTI, "PRINCIPAL",
      "principal allowed (User:alice)" },
    { "--deny-principal", 0, SAMSA_OPT_MULTI, "PRINCIPAL",
      "principal denied" },
    { "--allow-host", 0, SAMSA_OPT_MULTI, "HOST", "host of the allow ACLs" },
    { "--deny-host", 0, SAMSA_OPT_MULTI, "HOST", "host of the deny ACLs" },
    { "--host", 0, SAMSA_OPT_MULTI, "HOST", "host of every ACL" },
    { "--principal", 0, SAMSA_OPT_VALUE, "PRINCIPAL",
      "list: only this principal's ACLs" },
    { "--operation", 0, SAMSA_OPT_MULTI, "OP",
      "Read, Write, Create, Delete, Alter, Describe, ClusterAction, "
      "DescribeConfigs, AlterConfigs, IdempotentWrite, All (default)" },
    { NULL, 0, SAMSA_OPT_FLAG, NULL, NULL },
};

/* The resources, pattern and operations from the flags; need_res: at
 * least one resource.  0, or the usage exit code (printed). */
static int
acl_parse(samsa_session_t *s, bool need_res, bool filter, acl_args_t *a)
{
    static const char *const  flags[] = { "--topic", "--group",
                                          "--transactional-id" };
    static const int8_t       types[] = { ACL_TOPIC, ACL_GROUP, ACL_TXN_ID };
    const char *const        *v;
    const char               *pt;
    size_t                    n, i, k, total;
    int                       code;

    memset(a, 0, sizeof(*a));
    total = samsa_opts_has(&s->opts, "--cluster") ? 1 : 0;
    for (k = 0; k < 3; k++) {
        (void) samsa_opts_all(&s->opts, flags[k], &n);
        total += n;
    }
    if (need_res && total == 0) {
        return samsa_session_usage(s, "name a resource: --topic, --group, "
                                   "--transactional-id or --cluster");
    }
    a->res = calloc(total + 1, sizeof(*a->res));
    for (k = 0; k < 3; k++) {
        v = samsa_opts_all(&s->opts, flags[k], &n);
        for (i = 0; i < n; i++) {
            a->res[a->nres++] = (acl_res_t) { types[k], v[i] };
        }
    }
    if (samsa_opts_has(&s->opts, "--cluster")) {
        a->res[a->nres++] = (acl_res_t) { ACL_CLUSTER, "kafka-cluster" };
    }
    pt = samsa_opts_get(&s->opts, "--resource-pattern-type");
    a->pattern = filter && pt == NULL ? ACL_ANY : ACL_PATTERN_LITERAL;
    if (pt != NULL) {
        code = acl_code(acl_pattern_names, pt);
        if (code < 0 || (!filter && code != ACL_PATTERN_LITERAL
                         && code != ACL_PATTERN_PREFIXED)) {
            return samsa_session_usage(s, "invalid value '%s' for "
                                       "--resource-pattern-type: %s", pt,
                                       filter ? "any, match, literal or "
                                                "prefixed"
                                              : "literal or prefixed");
        }
        a->pattern = (int8_t) code;
    }
    v = samsa_opts_all(&s->opts, "--operation", &n);
    a->ops = calloc(n + 1, sizeof(*a->ops));
    for (i = 0; i < n; i++) {
        code = acl_code(acl_op_names, v[i]);
        if (code < 0 || (code == ACL_ANY && !filter)) {
            return samsa_session_usage(s, "invalid value '%s' for "
                                       "--operation", v[i]);
        }
        a->ops[a->nops++] = (int8_t) code;
    }
    if (a->nops == 0) {
        a->ops[a->nops++] = filter ? ACL_ANY : ACL_OP_ALL;
    }
    return 0;
}

static void
acl_args_fini(acl_args_t *a)
{
    free(a->res);
    free(a->ops);
}

/* The bindings add and remove make: every resource x operation x
 * (allow principal x allow host, deny principal x deny host).  With
 * any_principal, no principal flag means a NULL principal (a filter). */
static samsa_acl_binding_t *
acl_bindings(samsa_session_t *s, const acl_args_t *a, bool any_principal,
             size_t *np)
{
    const char *const  *ap, *const *dp, *const *ah, *const *dh, *const *h;
    static const char  *star = "*";
    samsa_acl_binding_t  *out;
    size_t                nap, ndp, nah, ndh, nh, r, o, i, j, n = 0, cap;
    static const char    *any = NULL;

    ap = samsa_opts_all(&s->opts, "--allow-principal", &nap);
    dp = samsa_opts_all(&s->opts, "--deny-principal", &ndp);
    ah = samsa_opts_all(&s->opts, "--allow-host", &nah);
    dh = samsa_opts_all(&s->opts, "--deny-host", &ndh);
    h = samsa_opts_all(&s->opts, "--host", &nh);
    if (nah == 0) {
        ah = nh > 0 ? h : (any_principal ? &any : &star);
        nah = nh > 0 ? nh : 1;
    }
    if (ndh == 0) {
        dh = nh > 0 ? h : (any_principal ? &any : &star);
        ndh = nh > 0 ? nh : 1;
    }
    cap = a->nres * a->nops * (nap * nah + ndp * ndh + 1) + 1;
    out = calloc(cap, sizeof(*out));
    for (r = 0; r < a->nres; r++) {
        for (o = 0; o < a->nops; o++) {
            samsa_acl_binding_t  b = {
                .resource_type = a->res[r].type,
                .resource_name = a->res[r].name,
                .pattern_type = a->pattern, .operation = a->ops[o],
            };

            for (i = 0; i < nap; i++) {
                for (j = 0; j < nah; j++) {
                    out[n] = b;
                    out[n].principal = ap[i];
                    out[n].host = ah[j];
                    out[n++].permission = ACL_ALLOW;
                }
            }
            for (i = 0; i < ndp; i++) {
                for (j = 0; j < ndh; j++) {
                    out[n] = b;
                    out[n].principal = dp[i];
                    out[n].host = dh[j];
                    out[n++].permission = ACL_DENY;
                }
            }
            if (any_principal && nap == 0 && ndp == 0) {
                out[n] = b;             /* every principal's */
                out[n].host = nh > 0 ? h[0] : NULL;
                out[n++].permission = ACL_ANY;
            }
        }
    }
    *np = n;
    return out;
}

static void
acl_print(samsa_session_t *s, const samsa_acl_binding_t *b, size_t n)
{
    static const char *const  hdr[] = { "RESOURCE_TYPE", "NAME", "PATTERN",
                                        "PRINCIPAL", "HOST", "OPERATION",
                                        "PERMISSION" };
    samsa_table_t            *t = s->json ? NULL : samsa_table_new(7, hdr);
    samsa_json_t              j;
    size_t                    i;

    samsa_session_list(s, &j);
    for (i = 0; i < n; i++) {
        if (s->json) {
            samsa_json_obj(&j);
            samsa_json_kv_str(&j, "resource_type",
                              acl_name(acl_resource_names,
                                       b[i].resource_type));
            samsa_json_kv_str(&j, "resource_name", b[i].resource_name);
            samsa_json_kv_str(&j, "pattern_type",
                              acl_name(acl_pattern_names, b[i].pattern_type));
            samsa_json_kv_str(&j, "principal", b[i].principal);
            samsa_json_kv_str(&j, "host", b[i].host);
            samsa_json_kv_str(&j, "operation",
                              acl_name(acl_op_names, b[i].operation));
            samsa_json_kv_str(&j, "permission",
                              acl_name(acl_perm_names, b[i].permission));
            samsa_json_obj_end(&j);
            continue;
        }
        samsa_table_row(t);
        samsa_table_cell(t, "%s", acl_name(acl_resource_names,
                                           b[i].resource_type));
        samsa_table_cell(t, "%s", b[i].resource_name);
        samsa_table_cell(t, "%s", acl_name(acl_pattern_names,
                                           b[i].pattern_type));
        samsa_table_cell(t, "%s", b[i].principal);
        samsa_table_cell(t, "%s", b[i].host);
        samsa_table_cell(t, "%s", acl_name(acl_op_names, b[i].operation));
        samsa_table_cell(t, "%s", acl_name(acl_perm_names, b[i].permission));
    }
    samsa_session_list_end(s, &j, t);
}

static int
acl_add(int argc, char **argv)
{
    samsa_session_t       s;
    samsa_admin_items_t  *res = NULL;
    samsa_acl_binding_t  *b = NULL;
    acl_args_t            a;
    samsa_err_t           e;
    size_t                i, n = 0;
    int                   rc;

    rc = samsa_session_parse(&s, "samsa acl add",
                             "samsa acl add (--allow-principal P | "
                             "--deny-principal P)... RESOURCE... [options]",
                             "Add ACL bindings (CreateAcls).", acl_opts,
                             argc, argv, 0, 0);
    if (rc >= 0) {
        samsa_session_close(&s);
        return rc;
    }
    rc = acl_parse(&s, true, false, &a);
    if (rc == 0) {
        b = acl_bindings(&s, &a, false, &n);
        if (n == 0) {
            rc = samsa_session_usage(&s, "name a principal: "
                                     "--allow-principal or --deny-principal");
        }
    }
    if (rc == 0) {
        rc = samsa_session_connect(&s);
    }
    if (rc != 0) {
        free(b);
        acl_args_fini(&a);
        samsa_session_close(&s);
        return rc;
    }
    e = samsa_admin_create_acls(s.admin, b, n, s.timeout_ms, &res);
    if (e != SAMSA_ERR_NONE) {
        rc = samsa_session_fail(&s, e, "cannot add ACLs");
    } else {
        for (i = 0; i < res->n; i++) {
            if (res->items[i].err != SAMSA_ERR_NONE) {
                rc = SAMSA_EXIT_FAILED;
                fprintf(stderr, "%s: %s '%s' %s %s: %s: %s\n", s.cmd,
                        acl_name(acl_resource_names, b[i].resource_type),
                        b[i].resource_name, b[i].principal,
                        acl_name(acl_op_names, b[i].operation),
                        samsa_err_name(res->items[i].err),
                        res->items[i].errmsg);
            }
        }
        if (rc == 0 && !s.json) {
            printf("Added %zu ACL binding(s).\n", n);
        } else if (rc == 0) {
            acl_print(&s, b, n);
        }
    }
    samsa_admin_result_free(res);
    free(b);
    acl_args_fini(&a);
    samsa_session_close(&s);
    return rc;
}

static int
acl_list(int argc, char **argv)
{
    samsa_session_t        s;
    samsa_acl_bindings_t  *res = NULL;
    samsa_acl_binding_t    f;
    acl_args_t             a;
    samsa_err_t            e;
    int                    rc;

    rc = samsa_session_parse(&s, "samsa acl list",
                             "samsa acl list [RESOURCE] [--principal P] "
                             "[options]",
                             "List ACL bindings (DescribeAcls): all, or "
                             "those of one resource.", acl_opts, argc, argv,
                             0, 0);
    if (rc >= 0) {
        samsa_session_close(&s);
        return rc;
    }
    rc = acl_parse(&s, false, true, &a);
    if (rc == 0 && a.nres > 1) {
        rc = samsa_session_usage(&s, "list one resource at most");
    }
    if (rc == 0) {
        rc = samsa_session_connect(&s);
    }
    if (rc != 0) {
        acl_args_fini(&a);
        samsa_session_close(&s);
        return rc;
    }
    f = (samsa_acl_binding_t) {
        .resource_type = a.nres > 0 ? a.res[0].type : ACL_ANY,
        .resource_name = a.nres > 0 ? a.res[0].name : NULL,
        .pattern_type = a.pattern,      /* any: the name exactly */
        .principal = samsa_opts_get(&s.opts, "--principal"),
        .operation = a.ops[0], .permission = ACL_ANY,
    };
    e = samsa_admin_describe_acls(s.admin, &f, s.timeout_ms, &res);
    if (e != SAMSA_ERR_NONE) {
        rc = samsa_session_fail(&s, e, "cannot list ACLs");
    } else {
        acl_print(&s, res->acls, res->n);
    }
    samsa_admin_result_free(res);
    acl_args_fini(&a);
    samsa_session_close(&s);
    return rc;
}

static int
acl_remove(int argc, char **argv)
{
    samsa_session_t        s;
    samsa_acl_bindings_t  *res;
    samsa_acl_binding_t   *b = NULL;
    acl_args_t             a;
    samsa_err_t            e;
    size_t                 i, n = 0, removed = 0;
    int                    rc;

    rc = samsa_session_parse(&s, "samsa acl remove",
                             "samsa acl remove RESOURCE... "
                             "[--allow-principal P | --deny-principal P]... "
                             "[options]",
                             "Remove ACL bindings (DeleteAcls): those given, "
                             "or with no principal every binding of the "
                             "resources.", acl_opts, argc, argv, 0, 0);
    if (rc >= 0) {
        samsa_session_close(&s);
        return rc;
    }
    rc = acl_parse(&s, true, true, &a);
    if (rc == 0) {
        if (a.pattern == ACL_ANY
            && samsa_opts_get(&s.opts, "--resource-pattern-type") == NULL) {
            a.pattern = ACL_PATTERN_LITERAL;
        }
        b = acl_bindings(&s, &a, true, &n);
        rc = samsa_session_connect(&s);
    }
    if (rc != 0) {
        free(b);
        acl_args_fini(&a);
        samsa_session_close(&s);
        return rc;
    }
    for (i = 0; i < n && rc == 0; i++) {
        res = NULL;
        e = samsa_admin_delete_acls(s.admin, &b[i], s.timeout_ms, &res);
        if (e != SAMSA_ERR_NONE) {
            rc = samsa_session_fail(&s, e, "cannot remove ACLs of %s '%s'",
                                    acl_name(acl_resource_names,
                                             b[i].resource_type),
                                    b[i].resource_name);
        } else {
            removed += res->n;
        }
        samsa_admin_result_free(res);
    }
    if (rc == 0) {
        if (s.json) {
            printf("{\"removed\":%zu}\n", removed);
        } else {
            printf("Removed %zu ACL binding(s).\n", removed);
        }
    }
    free(b);
    acl_args_fini(&a);
    samsa_session_close(&s);
    return rc;
}

static const samsa_cli_sub_t  acl_subs[] = {
    { "add", acl_add, "add ACL bindings" },
    { "list", acl_list, "list ACL bindings" },
    { "remove", acl_remove, "remove ACL bindings" },
    { NULL, NULL, NULL },
};

int
samsa_cmd_acl(int argc, char **argv)
{
    return samsa_cli_dispatch("samsa acl", acl_subs, argc, argv);
}
