/* Self-test input for check_symbols.sh: calls the heap; must be rejected. */
#include <stdlib.h>

void *selftest_grab(size_t n);
void selftest_drop(void *p);

void *selftest_grab(size_t n) { return malloc(n); }

void selftest_drop(void *p) { free(p); }
