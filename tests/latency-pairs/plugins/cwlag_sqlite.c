/* A loadable sqlite3 extension (`.load`): the SQL function cw_digest(TEXT), an FNV-1a hash
 * of its argument, with the injected lag of lag.h. */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1
#include "lag.h"

__attribute__((noinline)) void cw_digest(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  (void)argc;
  const unsigned char* s = sqlite3_value_text(argv[0]);
  unsigned long long h = 14695981039346656037ULL;
  for (; s && *s; ++s) h = (h ^ *s) * 1099511628211ULL;
  cw_lag();
  sqlite3_result_int64(ctx, (sqlite3_int64)(h >> 1));
}

int sqlite3_cwlagsqlite_init(sqlite3* db, char** err, const sqlite3_api_routines* api) {
  (void)err;
  SQLITE_EXTENSION_INIT2(api);
  return sqlite3_create_function(db, "cw_digest", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, 0,
                                 cw_digest, 0, 0);
}
