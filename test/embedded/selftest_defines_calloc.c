/* Self-test input for check_symbols.sh: defines an allocator; must be
 * rejected (a library must not ship its own heap either). */
#include <stddef.h>

void *calloc(size_t count, size_t size);

static unsigned char selftest_pool[64];

void *calloc(size_t count, size_t size)
{
    return (count * size <= sizeof selftest_pool) ? selftest_pool : NULL;
}
