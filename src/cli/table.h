/*
 * cli/table.h - aligned text tables for the samsa tool's default output:
 * a header row, then rows; every column as wide as its widest cell
 * (counted in UTF-8 characters), two spaces between columns, no trailing
 * blanks, right-aligned columns for numbers when asked.
 * Threads: a table belongs to one thread (main).
 */
#ifndef SAMSA_CLI_TABLE_H
#define SAMSA_CLI_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct samsa_table samsa_table_t;

/* A table with ncols columns named by headers (copied). */
samsa_table_t *samsa_table_new(size_t ncols, const char *const *headers);

void samsa_table_free(samsa_table_t *t);

/* Right-align column col (numbers). */
void samsa_table_align_right(samsa_table_t *t, size_t col);

/* Start a new row; cells are then added left to right. */
void samsa_table_row(samsa_table_t *t);

/* Add one cell (printf format) to the current row; a NULL fmt adds "-".
 * Cells beyond ncols are dropped; missing ones print empty. */
void samsa_table_cell(samsa_table_t *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Rows added so far. */
size_t samsa_table_nrows(const samsa_table_t *t);

/* Print the header and rows. */
void samsa_table_print(const samsa_table_t *t, FILE *out);

/* The display width of s: its UTF-8 characters. */
size_t samsa_table_width(const char *s);

#endif /* SAMSA_CLI_TABLE_H */
