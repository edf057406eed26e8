/*
 * The scenario on the host (the same scenario.c as the target image): prints
 * the same result table, so a test can compare the two. No stack
 * measurement here. Exit status: the number of failed checks (at most 100).
 *
 *   scenario_host [--plant-fault]
 */
#include <stdio.h>
#include <string.h>

#include "scenario.h"

void scn_write(const char *s, size_t len) { fwrite(s, 1, len, stdout); }

void scn_stack_begin(const void *frame) { (void)frame; }

size_t scn_stack_end(const void *frame) {
    (void)frame;
    return 0;
}

uint32_t scn_stack_ticks(void) { return 0; }

unsigned scn_stack_report(const char *entry, size_t bytes) {
    (void)entry;
    (void)bytes;
    return 0;
}

int main(int argc, char **argv) {
    unsigned flags = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--plant-fault") == 0) {
            flags |= SCN_PLANT_FAULT;
        }
    }
    unsigned failed = scn_run(flags);
    fflush(stdout);
    return failed > 100 ? 100 : (int)failed;
}
