#include <libwebsockets.h>

// LWS_PRE is a macro: the headroom every lws_write buffer needs before its payload.
static inline int tandem_lws_pre(void) { return LWS_PRE; }
