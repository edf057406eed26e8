/* Self-test input for check_symbols.sh: caller-owned memory only; must pass. */
#include <stddef.h>
#include <string.h>

size_t selftest_copy(char *dst, size_t cap, const char *src);

size_t selftest_copy(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap) {
        return 0;
    }
    memcpy(dst, src, n + 1);
    return n;
}
