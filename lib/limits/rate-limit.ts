import { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { env } from "../env";

const WINDOW_SECONDS = 60;

export type RateLimitState = { limit: number; remaining: number; resetSeconds: number; limited: boolean };

/** One fixed-window budget, backed by Redis when configured so that every app instance shares it. */
export class Budget {
  constructor(
    private readonly limiter: RateLimiterAbstract,
    readonly limit: number,
    private readonly ready: Promise<void>,
  ) {}

  async consume(id: string): Promise<RateLimitState> {
    await this.ready;
    try {
      return this.state(await this.limiter.consume(id), false);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) return this.state(rejection, true);
      throw rejection;
    }
  }

  /** The budget as it stands, without spending any of it. */
  async peek(id: string): Promise<RateLimitState> {
    await this.ready;
    const res = await this.limiter.get(id);
    if (!res) return { limit: this.limit, remaining: this.limit, resetSeconds: WINDOW_SECONDS, limited: false };
    return this.state(res, res.consumedPoints > this.limit);
  }

  private state(res: RateLimiterRes, limited: boolean): RateLimitState {
    return {
      limit: this.limit,
      remaining: Math.max(0, this.limit - res.consumedPoints),
      resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
      limited,
    };
  }
}

export type RateLimiters = {
  /** Requests per API key. */
  perKey: Budget;
  /** Failed authentications per client address. */
  authFailuresPerIp: Budget;
  /** Requests to endpoints that need no key, per client address. */
  anonymousPerIp: Budget;
  /** Failed portal sign-ins per account (email). */
  signInFailuresPerAccount: Budget;
  /** Server actions per portal user: the same number per minute as a key's requests. */
  perUser: Budget;
  close(): Promise<void>;
};

export type RateLimitOptions = {
  redisUrl?: string;
  perMinute: number;
  authFailuresPerMinute: number;
  signInFailuresPerMinute?: number;
  keyPrefix?: string;
};

export function createRateLimiters(options: RateLimitOptions): RateLimiters {
  const prefix = options.keyPrefix ?? "das:rl";
  let redis: Redis | undefined;
  let ready = Promise.resolve();
  if (options.redisUrl) {
    // Without an offline queue a Redis outage fails fast into the in-memory insurance limiter
    // instead of stalling requests; each instance then limits on its own until Redis is back.
    redis = new Redis(options.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000 });
    redis.on("error", () => {});
    const client = redis;
    ready = new Promise<void>((resolve) => {
      client.once("ready", () => resolve());
      setTimeout(resolve, 2000).unref();
    });
  }
  const budget = (name: string, points: number) => {
    const memory = new RateLimiterMemory({ points, duration: WINDOW_SECONDS, keyPrefix: `${prefix}:${name}` });
    const limiter = redis
      ? new RateLimiterRedis({
          storeClient: redis,
          points,
          duration: WINDOW_SECONDS,
          keyPrefix: `${prefix}:${name}`,
          insuranceLimiter: memory,
        })
      : memory;
    return new Budget(limiter, points, ready);
  };
  return {
    perKey: budget("key", options.perMinute),
    authFailuresPerIp: budget("authfail", options.authFailuresPerMinute),
    anonymousPerIp: budget("anon", options.perMinute),
    signInFailuresPerAccount: budget("signin", options.signInFailuresPerMinute ?? 5),
    perUser: budget("user", options.perMinute),
    close: async () => {
      redis?.disconnect();
    },
  };
}

const globalForLimits = globalThis as unknown as { dasRateLimiters?: RateLimiters };

export function rateLimiters(): RateLimiters {
  const {
    REDIS_URL,
    RATE_LIMIT_KEY_PREFIX,
    RATE_LIMIT_PER_MINUTE,
    AUTH_FAILURES_PER_MINUTE,
    SIGNIN_FAILURES_PER_MINUTE,
  } = env();
  globalForLimits.dasRateLimiters ??= createRateLimiters({
    redisUrl: REDIS_URL,
    perMinute: RATE_LIMIT_PER_MINUTE,
    authFailuresPerMinute: AUTH_FAILURES_PER_MINUTE,
    signInFailuresPerMinute: SIGNIN_FAILURES_PER_MINUTE,
    keyPrefix: RATE_LIMIT_KEY_PREFIX,
  });
  return globalForLimits.dasRateLimiters;
}
