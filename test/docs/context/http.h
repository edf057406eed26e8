/* What the README's HTTP client fragment refers to and does not declare
 * itself: the caller's port, error, status and callbacks. */
#include <string.h>

#include "ctxc/ctxc.h"

struct my_request {
    const char *json;
};
struct me {
    int events;
};
static struct my_request my_request;
static struct me me;
static ctxc_port_t port;
static ctxc_error_t err;
static ctxc_status_t st;

static ctxc_status_t write_body(void *body_user, ctxc_http_write_fn write,
                                void *write_user) {
    const struct my_request *r = body_user;
    return write(write_user, r->json, strlen(r->json));
}
static ctxc_status_t print_header(void *user, const char *name,
                                  size_t name_len, const char *value,
                                  size_t value_len) {
    (void)user, (void)name, (void)name_len, (void)value, (void)value_len;
    return CTXC_OK;
}
static ctxc_status_t on_event(void *user, const ctxc_sse_event_t *ev) {
    (void)ev;
    ((struct me *)user)->events++;
    return CTXC_OK;
}
