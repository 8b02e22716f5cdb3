/* textline — the lines of a text file held in memory, one at a time, with
 * their blanks trimmed: what every line-oriented data reader shares (the
 * acceptance traces and tree profiles, sim/model/accept_trace.c and
 * sim/model/accept_tree.c; empirical values through ynode_next_data_line,
 * sim/io/ynode.h; rank streams, kernels/llm/accrank.c), so that all count
 * lines and columns alike for their FILE:LINE:COL messages.
 */
#ifndef SPECSIM_TEXTLINE_H
#define SPECSIM_TEXTLINE_H

typedef struct textline {
    char *next;   /* the rest of the text, NULL at its end */
    int line;     /* 1-based number of the line last returned */
} textline_t;

/* Starts at the beginning of text (NUL-terminated, written to: line ends
 * and trailing blanks become NULs). */
void textline_init(textline_t *it, char *text);

/* The next line with leading blanks (spaces, tabs) and trailing blanks and
 * '\r' cut off, it->line its number and *col the column of its first
 * character; empty lines are returned too (""). NULL at the end. */
char *textline_next(textline_t *it, int *col);

#endif
