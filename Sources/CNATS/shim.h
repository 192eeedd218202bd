#include <nats/nats.h>
