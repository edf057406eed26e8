/*
 * ctxc port template — start a new port by copying this folder
 * (port/template -> port/<yours>) and filling in every hook of
 * ctxc_port_template.c. Each hook says what the core expects of it; the
 * contract itself is include/ctxc/port.h. Until a hook is written it
 * answers CTXC_E_UNAVAILABLE, so a half-done port fails loudly, never
 * silently. docs/porting.md walks through it.
 */
#ifndef CTXC_PORT_TEMPLATE_H
#define CTXC_PORT_TEMPLATE_H

#include "ctxc/port.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Your port's state: file handles, the root of your filesystem, the RTOS
 * mutex handle, the socket and TLS contexts... Keep it in static storage
 * or let the application own it; ctxc never allocates. */
typedef struct {
    int unused; /* replace with your fields */
} ctxc_template_port_t;

/* Fills port with the hooks of this template over state t. */
void ctxc_template_port_init(ctxc_port_t *port, ctxc_template_port_t *t);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_PORT_TEMPLATE_H */
