/*
 * cli/table.c - aligned text tables (see table.h).
 * Threads: main.
 */
#include "cli/table.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct samsa_table {
    size_t    ncols;
    char    **cells;            /* row-major; row 0 is the header */
    size_t    nrows;            /* including the header */
    size_t    cap;              /* rows allocated */
    size_t    ncur;             /* cells filled in the last row */
    bool     *right;
};

samsa_table_t *
samsa_table_new(size_t ncols, const char *const *headers)
{
    samsa_table_t  *t = calloc(1, sizeof(*t));
    size_t          i;

    t->ncols = ncols;
    t->right = calloc(ncols + 1, sizeof(bool));
    samsa_table_row(t);
    for (i = 0; i < ncols; i++) {
        samsa_table_cell(t, "%s", headers[i]);
    }
    return t;
}

void
samsa_table_free(samsa_table_t *t)
{
    size_t  i;

    if (t == NULL) {
        return;
    }
    for (i = 0; i < t->nrows * t->ncols; i++) {
        free(t->cells[i]);
    }
    free(t->cells);
    free(t->right);
    free(t);
}

void
samsa_table_align_right(samsa_table_t *t, size_t col)
{
    if (col < t->ncols) {
        t->right[col] = true;
    }
}

void
samsa_table_row(samsa_table_t *t)
{
    if (t->nrows == t->cap) {
        t->cap = t->cap * 2 + 8;
        t->cells = realloc(t->cells, t->cap * t->ncols * sizeof(char *));
    }
    memset(&t->cells[t->nrows * t->ncols], 0, t->ncols * sizeof(char *));
    t->nrows++;
    t->ncur = 0;
}

void
samsa_table_cell(samsa_table_t *t, const char *fmt, ...)
{
    va_list  ap;
    char    *s = NULL;

    if (t->ncur >= t->ncols) {
        return;
    }
    if (fmt == NULL) {
        s = strdup("-");
    } else {
        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0) {
            s = NULL;
        }
        va_end(ap);
    }
    t->cells[(t->nrows - 1) * t->ncols + t->ncur++] = s;
}

size_t
samsa_table_nrows(const samsa_table_t *t)
{
    return t->nrows - 1;
}

size_t
samsa_table_width(const char *s)
{
    size_t  n = 0;

    for (; s != NULL && *s != '\0'; s++) {
        if (((unsigned char) *s & 0xC0) != 0x80) {  /* not a continuation */
            n++;
        }
    }
    return n;
}

void
samsa_table_print(const samsa_table_t *t, FILE *out)
{
    size_t      *w = calloc(t->ncols + 1, sizeof(size_t));
    size_t       r, c, cw, pad, last;
    const char  *s;

    for (r = 0; r < t->nrows; r++) {
        for (c = 0; c < t->ncols; c++) {
            cw = samsa_table_width(t->cells[r * t->ncols + c]);
            w[c] = cw > w[c] ? cw : w[c];
        }
    }
    for (r = 0; r < t->nrows; r++) {
        last = 0;                               /* no trailing blanks */
        for (c = 0; c < t->ncols; c++) {
            s = t->cells[r * t->ncols + c];
            last = s != NULL && s[0] != '\0' ? c : last;
        }
        for (c = 0; c <= last; c++) {
            s = t->cells[r * t->ncols + c];
            s = s != NULL ? s : "";
            pad = w[c] - samsa_table_width(s);
            if (c > 0) {
                fputs("  ", out);
            }
            if (t->right[c]) {
                fprintf(out, "%*s%s", (int) pad, "", s);
            } else if (c < last) {
                fprintf(out, "%s%*s", s, (int) pad, "");
            } else {
                fputs(s, out);
            }
        }
        fputc('\n', out);
    }
    free(w);
}
