import { getDb, type Db } from "../db/client";
import { isTransaction } from "../db/tx";
import { env, requireEnv } from "../env";
import { type CacheableRead, jsonBody, type JsonBody } from "./cacheable";
import { InvalidationChannel } from "./invalidation";
import { Lru } from "./lru";

/** Entries per store; bodies are bounded in bytes instead (API_CACHE_MB), resolved scopes in files. */
const ENTRIES = { keys: 10_000, licences: 10_000, datasets: 10_000, episodes: 50_000 } as const;
/**
 * The files all resolved scopes together may hold: ten whole 10,000-file downloads, about 30 MB,
 * and about 15 MB more for each file's JSON, written once per scope (lib/downloads/download.ts).
 */
const SCOPE_FILES = 100_000;

export type Store = keyof typeof ENTRIES | "bodies" | "scopes";

/**
 * What one instance keeps in memory for the API: keys by the digest of their secret, the licences
 * each organisation (or narrowed key) may use, the catalog (a dataset's versions, the versions an
 * episode is in), serialised bodies of answers and the files of the scopes downloads resolved.
 * Everything in it is dropped together whenever the invalidation channel says anything changed,
 * lost its connection or got it back, and nothing is read from it or stored into it while the
 * channel is not listening.
 */
export class ReadCache {
  private readonly stores: Record<Store, Lru<string, unknown>>;

  constructor(
    readonly channel: InvalidationChannel,
    bodyBytes: number,
  ) {
    this.stores = {
      keys: new Lru(ENTRIES.keys),
      licences: new Lru(ENTRIES.licences),
      datasets: new Lru(ENTRIES.datasets),
      episodes: new Lru(ENTRIES.episodes),
      bodies: new Lru(bodyBytes, (body) => (body as JsonBody).bytes.length),
      scopes: new Lru(SCOPE_FILES, (scope) => (scope as { files: readonly unknown[] }).files.length),
    };
    channel.onFlush(() => {
      for (const store of Object.values(this.stores)) store.clear();
    });
  }

  /**
   * The value under `key`, or `load()`'s, stored only if no flush happened while it was loading: a
   * read that raced a change (its notification flushed the cache mid-read) is served but not kept.
   * `undefined` (nothing found) is never kept: made-up keys must not push real ones out.
   */
  async memo<T>(store: Store, key: string, load: () => Promise<T>): Promise<T> {
    if (!this.channel.listening) return load();
    const lru = this.stores[store];
    const hit = lru.get(key);
    if (hit !== undefined) return hit as T;
    const generation = this.channel.generation;
    const value = await load();
    if (value !== undefined && this.channel.listening && this.channel.generation === generation) lru.set(key, value);
    return value;
  }

  /** How many entries (bytes, for bodies) a store holds; for tests and the benchmark's checks. */
  held(store: Store): number {
    return this.stores[store].weight;
  }
}

/**
 * A read through the caller's cache when it has one. Inside a transaction the database is always
 * asked: the transaction's snapshot may hold its own writes, and a check made there (a download's
 * licence) belongs to the same transaction as what it guards.
 */
export function cachedRead<T>(
  ctx: { db: Db; cache?: ReadCache },
  store: Store,
  key: readonly unknown[],
  load: () => Promise<T>,
): Promise<T> {
  return ctx.cache && !isTransaction(ctx.db) ? ctx.cache.memo(store, JSON.stringify(key), load) : load();
}

/** The serialised answer of `read`, from the cache when the caller has one. */
export function cachedBody(cache: ReadCache | undefined, read: CacheableRead<object>): Promise<JsonBody> {
  const serialise = async () => jsonBody(await read.read());
  return cache ? cache.memo("bodies", JSON.stringify(read.key), serialise) : serialise();
}

const holder = globalThis as unknown as { dasReadCache?: ReadCache | null };

/** This instance's cache, listening from its first use; undefined when API_CACHE_MB is 0. */
export function readCache(): ReadCache | undefined {
  if (holder.dasReadCache === undefined) {
    const { API_CACHE_MB, API_CACHE_RELISTEN_MS } = env();
    if (API_CACHE_MB === 0) {
      holder.dasReadCache = null;
    } else {
      const channel = new InvalidationChannel({
        // LISTEN needs a session of its own: around a transaction-mode pooler, to the primary itself.
        url: env().DATABASE_LISTEN_URL ?? requireEnv("DATABASE_URL"),
        notifier: getDb().$client,
        relistenMs: API_CACHE_RELISTEN_MS,
      });
      holder.dasReadCache = new ReadCache(channel, API_CACHE_MB * 2 ** 20);
      channel.start();
    }
  }
  return holder.dasReadCache ?? undefined;
}
