/*
 * broker/authz.c - see authz.h.
 */
#include "broker/authz.h"

#include <stdio.h>
#include <string.h>

#include "util/alloc.h"

samsa_err_t
samsa_authz_init(samsa_authz_t *authz, const samsa_config_t *cfg,
                 char *errstr, size_t errstr_size)
{
    const char  *cls = samsa_config_str(cfg, "authorizer.class.name");
    const char  *su = samsa_config_str(cfg, "super.users");
    const char  *p, *end;
    size_t       len;

    memset(authz, 0, sizeof(*authz));
    authz->enabled = cls != NULL && cls[0] != '\0';
    authz->allow_if_none = samsa_config_bool(cfg,
                                             "allow.everyone.if.no.acl.found");
    if (su == NULL || su[0] == '\0') {
        return SAMSA_ERR_NONE;
    }
    for (p = su; ; p = end + 1) {
        end = strchr(p, ';');
        len = end != NULL ? (size_t) (end - p) : strlen(p);
        while (len > 0 && (*p == ' ' || *p == '\t')) {
            p++;
            len--;
        }
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t')) {
            len--;
        }
        if (len == 0 || memchr(p, ':', len) == NULL) {
            snprintf(errstr, errstr_size, "super.users: '%s' is not a "
                     "semicolon-separated list of principals (Type:name, "
                     "e.g. User:admin)", su);
            samsa_authz_fini(authz);
            return SAMSA_ERR__CONFIG;
        }
        authz->super_users = samsa_realloc(
            authz->super_users,
            (authz->nsuper_users + 1) * sizeof(*authz->super_users));
        authz->super_users[authz->nsuper_users++] = samsa_strndup(p, len);
        if (end == NULL) {
            break;
        }
    }
    return SAMSA_ERR_NONE;
}

void
samsa_authz_fini(samsa_authz_t *authz)
{
    size_t  i;

    for (i = 0; i < authz->nsuper_users; i++) {
        samsa_free(authz->super_users[i]);
    }
    samsa_free(authz->super_users);
    memset(authz, 0, sizeof(*authz));
}

bool
samsa_authz_is_super(const samsa_authz_t *authz, const char *principal)
{
    size_t  i;

    for (i = 0; i < authz->nsuper_users; i++) {
        if (strcmp(authz->super_users[i], principal) == 0) {
            return true;
        }
    }
    return false;
}

bool
samsa_authz_decide(const samsa_authz_t *authz, const samsa_image_t *img,
                   const char *principal, const char *host, int8_t operation,
                   int8_t resource_type, samsa_slice_t name)
{
    if (!authz->enabled || samsa_authz_is_super(authz, principal)) {
        return true;
    }
    return samsa_acl_authorize(samsa_image_acls(img), principal, host,
                               operation, resource_type,
                               name.ptr != NULL ? name.ptr : "", name.len,
                               authz->allow_if_none);
}

int32_t
samsa_authz_decide_ops(const samsa_authz_t *authz, const samsa_image_t *img,
                       const char *principal, const char *host,
                       int8_t resource_type, samsa_slice_t name)
{
    uint32_t  ops = samsa_acl_supported_ops(resource_type), bits = 0;
    int8_t    op;

    for (op = 0; op < SAMSA_ACL_OP__LIMIT; op++) {
        if ((ops & (1u << op))
            && samsa_authz_decide(authz, img, principal, host, op,
                                  resource_type, name)) {
            bits |= 1u << op;
        }
    }
    return (int32_t) bits;
}
