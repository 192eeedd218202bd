#include <libpq-fe.h>
#include <postgres_ext.h>

// PG_DIAG_* are character-literal macros; Swift does not import them.
static inline int tandem_pg_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }
static inline int tandem_pg_diag_message_primary(void) { return PG_DIAG_MESSAGE_PRIMARY; }
