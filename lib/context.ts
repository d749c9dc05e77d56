import type { Db } from "./db/client";
import type { Principal } from "./auth/principal";
import type { ReadCache } from "./cache/read-cache";

/** What every domain verb receives: where to read and write, who is asking, and the request's id. */
export type Ctx<P extends Principal = Principal> = {
  db: Db;
  principal: P;
  requestId: string;
  /**
   * The instance's in-memory cache, for the API's reads (keys, licences, catalog, bodies). Absent for
   * the portal, the command line and tests that call verbs directly: they read the database.
   */
  cache?: ReadCache;
};
