#include <libwebsockets.h>
// malloc_trim: the HTTP engine gives memory back after a flood of connections (decisions E38).
#include <malloc.h>

// LWS_PRE is a macro: the headroom every lws_write buffer needs before its payload.
static inline int tandem_lws_pre(void) { return LWS_PRE; }

// The event-loop tick (decisions E33). lws 4.1.6's libev plugin re-arms its one ev_timer only
// when that timer is idle (ev_timer_start on an active watcher does nothing), so a timeout set
// while a later one is pending would wait for the later one. A sul of our own every 50 ms keeps
// the timer's next expiry at most 50 ms away; each expiry services every ripe timeout and arms
// the timer afresh.
struct tandem_tick {
    lws_sorted_usec_list_t sul;
    struct lws_context *context;
};
static inline void tandem_tick_fire(lws_sorted_usec_list_t *sul) {
    struct tandem_tick *tick = (struct tandem_tick *)sul;
    lws_sul_schedule(tick->context, 0, sul, tandem_tick_fire, 50 * LWS_US_PER_MS);
}
static inline void tandem_tick_start(struct tandem_tick *tick, struct lws_context *context) {
    tick->context = context;
    lws_sul_schedule(context, 0, &tick->sul, tandem_tick_fire, 50 * LWS_US_PER_MS);
}
static inline void tandem_tick_stop(struct tandem_tick *tick) { lws_sul_cancel(&tick->sul); }
