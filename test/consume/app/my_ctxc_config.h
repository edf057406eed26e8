/* The consumer's own ctxc configuration (test/consume): given to the
 * add_subdirectory() build of the host as -DCTXC_CONFIG_FILE=<its path>, it
 * must reach the library and the application alike. */
#ifndef MY_CTXC_CONFIG_H
#define MY_CTXC_CONFIG_H

#define CTXC_CFG_ERROR_MESSAGE_LEN 120
#define CTXC_CFG_HISTORY_ARENA_BYTES (128u * 1024u)

#endif
