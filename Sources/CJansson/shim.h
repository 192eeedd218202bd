#include <jansson.h>

// json_decref is a static inline with a macro-built refcount path; give Swift a plain call.
static inline void tandem_json_decref(json_t *json) { json_decref(json); }
