#include <ev.h>
