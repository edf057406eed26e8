/*
 * Runs a fuzz target (fuzz.h) once over each input file: the regression
 * mode of `make test`, without libFuzzer. Arguments are files or
 * directories (their regular files, in name order; a missing directory is
 * an error, an empty one is fine). Prints "<target>: N inputs, N passed"
 * at the end; a broken invariant aborts (fuzz_fail) with the file named.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static size_t inputs;

static void run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "fuzz driver: cannot open %s\n", path);
        exit(2);
    }
    size_t cap = 1u << 16, len = 0;
    uint8_t *data = malloc(cap);
    for (;;) {
        if (data == NULL) {
            fprintf(stderr, "fuzz driver: out of memory\n");
            exit(2);
        }
        len += fread(data + len, 1, cap - len, f);
        if (len < cap) {
            break;
        }
        cap *= 2;
        data = realloc(data, cap);
    }
    if (ferror(f)) {
        fprintf(stderr, "fuzz driver: cannot read %s\n", path);
        exit(2);
    }
    fclose(f);
    /* an exact-size copy, so ASan sees any read past the input */
    uint8_t *exact = malloc(len > 0 ? len : 1);
    if (exact == NULL) {
        fprintf(stderr, "fuzz driver: out of memory\n");
        exit(2);
    }
    memcpy(exact, data, len);
    free(data);
    fprintf(stderr, "input %s (%zu bytes)\n", path, len);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    inputs++;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_path(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "fuzz driver: no such file or directory: %s\n", path);
        exit(2);
    }
    if (!S_ISDIR(st.st_mode)) {
        run_file(path);
        return;
    }
    DIR *d = opendir(path);
    if (d == NULL) {
        fprintf(stderr, "fuzz driver: cannot list %s\n", path);
        exit(2);
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') {
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            names = realloc(names, cap * sizeof *names);
            if (names == NULL) {
                exit(2);
            }
        }
        size_t l = strlen(path) + strlen(e->d_name) + 2;
        names[n] = malloc(l);
        if (names[n] == NULL) {
            exit(2);
        }
        snprintf(names[n], l, "%s/%s", path, e->d_name);
        n++;
    }
    closedir(d);
    if (n > 1) {
        qsort(names, n, sizeof *names, by_name);
    }
    for (size_t i = 0; i < n; i++) {
        struct stat fst;
        if (stat(names[i], &fst) == 0 && S_ISREG(fst.st_mode)) {
            run_file(names[i]);
        }
        free(names[i]);
    }
    free(names);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        run_path(argv[i]);
    }
    const char *name = strrchr(argv[0], '/');
    printf("%s: %zu inputs, %zu passed, 0 failed\n",
           name != NULL ? name + 1 : argv[0], inputs, inputs);
    return 0;
}
