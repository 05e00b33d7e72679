/*
 * server/status_html.h - the status page (src/server/status.html), built
 * into the binary: the C file defining it is generated at build time by
 * src/server/embed.py.  Threads: const data; any thread.
 */
#ifndef SAMSA_SERVER_STATUS_HTML_H
#define SAMSA_SERVER_STATUS_HTML_H

#include <stddef.h>

extern const char    samsa_status_html[];
extern const size_t  samsa_status_html_len;

#endif /* SAMSA_SERVER_STATUS_HTML_H */
