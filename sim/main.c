/* PLACEHOLDER CLI — replaced by the CLI owner. */
#include <stdio.h>
int main(void) { fprintf(stderr, "specsim: not implemented yet\n"); return 1; }
