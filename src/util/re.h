/*
 * util/re.h - regular expressions in RE2 syntax, matched against a whole
 * string, as Kafka matches a SubscribedTopicRegex (GroupMetadataManager
 * compiles it with com.google.re2j.Pattern and calls matches()).  Both the
 * broker's KIP-848 coordinator and libsamsa's pattern subscriptions use it,
 * so a pattern means the same on either side.
 *
 * Built on PCRE2 (libpcre2-8), whose syntax is a superset of RE2's for
 * what clients send (`(?:...)`, `\d`, `\w`, classes, `(?i)`, `(?P<n>...)`,
 * lazy quantifiers).  The PCRE2-only constructs RE2 refuses are refused
 * here too, so the broker answers INVALID_REGULAR_EXPRESSION where Kafka
 * does: backreferences (`\1`, `\g`, `\k`), lookarounds, atomic groups,
 * possessive quantifiers, conditionals, recursion, callouts, comments
 * `(?#...)`, `(*VERB)`s, and the escapes RE2 lacks (`\K \R \X \G \Z \h \H
 * \N \o \c \e \E \g \k`).  Differences kept: `\v` is PCRE2's vertical space
 * class (RE2: the VT character), and RE2's size limits are not applied.
 * `$` matches only at the very end (RE2 without (?m)), not before a final
 * newline.
 *
 * Threads: a compiled samsa_re_t is immutable; samsa_re_match may run on
 * it from several threads at once (each call has its own match data).
 */
#ifndef SAMSA_UTIL_RE_H
#define SAMSA_UTIL_RE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct samsa_re  samsa_re_t;            /* opaque */

/* pattern[0..len) compiled (it need not be NUL-terminated); NULL when it is
 * not a valid RE2 expression, with a reason in errstr (always terminated
 * when errstr_size > 0). */
samsa_re_t *samsa_re_compile(const char *pattern, size_t len, char *errstr,
                             size_t errstr_size);

/* Whether the whole of s (NUL-terminated) matches re. */
bool samsa_re_match(const samsa_re_t *re, const char *s);

/* Frees re; NULL is a no-op. */
void samsa_re_free(samsa_re_t *re);

#endif /* SAMSA_UTIL_RE_H */
