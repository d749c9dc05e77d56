import net from "node:net";
import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { env } from "@/lib/env";
import { toAppError } from "@/lib/http/respond";
import { createDb, getDb, sqlOf } from "./client";

// A server that accepts the TCP connection and then never answers: what a half-failed database
// host, or a network path that black-holes packets after the handshake, looks like to a client.
let blackhole: net.Server;
let port: number;
const held: net.Socket[] = [];

beforeAll(async () => {
  blackhole = net.createServer((socket) => held.push(socket));
  await new Promise<void>((resolve) => blackhole.listen(0, "127.0.0.1", resolve));
  port = (blackhole.address() as net.AddressInfo).port;
});

afterAll(async () => {
  for (const socket of held) socket.destroy();
  await new Promise((resolve) => blackhole.close(resolve));
});

describe("the database client", () => {
  it("answers the next query on a connection whose COPY was read more slowly than it came", async () => {
    // The archive's export (lib/disclosures/archive.ts): COPY … TO STDOUT through gzip into a file.
    // postgres.js paused the socket when the stream was full and resumed it only when the stream
    // was read again, which never happens once the COPY is done: the connection's next query hung.
    const db = createDb(inject("databaseUrl"), { max: 1 });
    try {
      const copy = await db.$client`copy (select repeat('x', 2000) from generate_series(1, 5000)) to stdout`.readable();
      let bytes = 0;
      await pipeline(
        copy,
        new Writable({
          highWaterMark: 1,
          write(chunk: Buffer, _encoding, done) {
            bytes += chunk.length;
            setTimeout(done, 0);
          },
        }),
      );
      expect(bytes).toBeGreaterThan(10_000_000);
      const next = db.$client`select 1 as one`;
      const answer = await Promise.race([next, new Promise((resolve) => setTimeout(() => resolve("hung"), 5000))]);
      expect(answer).toEqual([{ one: 1 }]);
    } finally {
      await db.$client.end({ timeout: 0 });
    }
  });

  it("gives up on a connection that never becomes ready after DB_CONNECT_TIMEOUT_S, and that is a 503", async () => {
    expect(env().DB_CONNECT_TIMEOUT_S).toBe(5);
    const db = createDb(`postgres://postgres:postgres@127.0.0.1:${port}/das`, { max: 1 });
    const started = Date.now();
    const error = await db.$client`select 1`.then(
      () => undefined,
      (e: unknown) => e,
    );
    const waited = Date.now() - started;
    await db.$client.end({ timeout: 0 });
    expect(error).toMatchObject({ code: "CONNECT_TIMEOUT" });
    expect((error as Error).message).toBe(`write CONNECT_TIMEOUT 127.0.0.1:${port}`);
    expect(waited).toBeGreaterThanOrEqual(4_900);
    expect(waited).toBeLessThan(6_500);
    const answer = toAppError(error, "req_test");
    expect(answer.code).toBe("unavailable");
    expect(answer.status).toBe(503);
    expect(answer.headers["Retry-After"]).toMatch(/^\d+$/);
  });

  it("recovers at once from a transaction whose backend is terminated under it (the driver's rollback on a dead connection)", async () => {
    const url = new URL(inject("databaseUrl"));
    const name = `das-client-test-${randomBytes(4).toString("hex")}`;
    url.searchParams.set("application_name", name);
    // One connection: if the dead one is left unusable, nothing else can hide it.
    const db = createDb(url.toString(), { max: 1 });
    try {
      const error = await db
        .transaction(async (tx) => {
          // Terminated while a statement runs: the driver then rolls the transaction back.
          setTimeout(
            () =>
              void getDb()
                .$client`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${name}`.then(),
            300,
          );
          await sqlOf(tx)`select pg_sleep(3)`;
        })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(toAppError(error, "req_test").code).toBe("unavailable");
      // Before the driver was patched the ROLLBACK then threw where nothing could catch it, and
      // the connection's next startup message was never sent: this waited for the connect timeout.
      for (let i = 0; i < 3; i++) {
        const started = Date.now();
        expect(await db.$client`select ${i}::int as n`).toEqual([{ n: i }]);
        expect(Date.now() - started).toBeLessThan(2_000);
      }
    } finally {
      await db.$client.end({ timeout: 1 });
    }
  });

  it("binds arrays on a pool whose first connection failed to read the array types (not as '1,2,3', 22P02)", async () => {
    // The driver learns how to write an array from a query of pg_type on each new connection. That
    // query can fail on a connection that stays open (here a lock timeout; in a chaos run, whatever
    // a restarting primary answered), and the driver then used the connection without the types:
    // every array was bound as its text and refused as a malformed array literal, on that
    // connection and every other one of the pool until one read them. pg_type is a database's own
    // catalog, so a scratch database's can be locked without holding up any other test.
    const admin = getDb().$client;
    const scratch = `das_types_${randomBytes(4).toString("hex")}`;
    await admin.unsafe(`create database ${scratch}`);
    const url = new URL(inject("databaseUrl"));
    url.pathname = `/${scratch}`;
    const holder = createDb(url.toString(), { max: 1 }).$client;
    const db = createDb(url.toString(), { max: 1, settings: { lock_timeout: "200ms" } });
    try {
      const first = await holder.begin(async (tx) => {
        await tx`lock table pg_catalog.pg_type in access exclusive mode`;
        return db.$client`select ${[1, 2, 3]}::int[] as a`.then(
          () => "answered",
          (e: { code?: string }) => e.code,
        );
      });
      // The query that waited for the connection learns why it could not have one.
      expect(first).toBe("55P03");
      expect(await db.$client`select ${[1, 2, 3]}::int[] as a, ${["x", "y"]}::text[] as b`).toEqual([
        { a: [1, 2, 3], b: ["x", "y"] },
      ]);
    } finally {
      await db.$client.end({ timeout: 1 });
      await holder.end({ timeout: 1 });
      await admin.unsafe(`drop database if exists ${scratch} with (force)`);
    }
  });
});

/**
 * A TCP relay to the run's PostgreSQL that can be made to swallow everything in both directions
 * while keeping every connection open: a network path cut without a reset (a failover, a partition).
 */
async function cuttableRelay(target: URL): Promise<{ url: URL; cut(on: boolean): void; close(): Promise<void> }> {
  let cut = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(from);
      from.on("data", (chunk) => void (cut || to.write(chunk)));
      from.on("error", () => to.destroy());
      from.on("close", () => to.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = new URL(target);
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url,
    cut: (on) => void (cut = on),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe("the service pool's limits (DB_STATEMENT_TIMEOUT_S)", () => {
  it("closes a connection that owes an answer and stays silent past the limit, answers 503, then reconnects", {
    timeout: 60_000,
  }, async () => {
    const relay = await cuttableRelay(new URL(inject("databaseUrl")));
    const db = createDb(relay.url.toString(), { max: 1, statementTimeoutS: 1 });
    try {
      expect(await db.$client`select 1 as n`).toEqual([{ n: 1 }]);
      // Idle past the limit is not silence: the connection owes nothing and is kept.
      await new Promise((resolve) => setTimeout(resolve, 7_000));
      expect(await db.$client`select 2 as n`).toEqual([{ n: 2 }]);

      relay.cut(true);
      const started = Date.now();
      const error = await db.$client`select 3 as n`.then(
        () => undefined,
        (e: unknown) => e,
      );
      const waited = Date.now() - started;
      // The limit is the statement timeout and 5 s of grace, checked every quarter of it.
      expect(waited).toBeGreaterThanOrEqual(5_900);
      expect(waited).toBeLessThan(9_000);
      expect(error).toMatchObject({ code: "CONNECTION_CLOSED" });
      expect(toAppError(error, "req_test")).toMatchObject({ code: "unavailable", status: 503 });

      relay.cut(false);
      expect(await db.$client`select 4 as n`).toEqual([{ n: 4 }]);
    } finally {
      await db.$client.end({ timeout: 0 });
      await relay.close();
    }
  });

  it("ends a statement past the limit at the server, which is a 503", { timeout: 30_000 }, async () => {
    const db = createDb(inject("databaseUrl"), { max: 1, statementTimeoutS: 1 });
    try {
      const error = await db.$client`select pg_sleep(3)`.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: "57014" }); // query_canceled
      expect(toAppError(error, "req_test")).toMatchObject({ code: "unavailable", status: 503 });
    } finally {
      await db.$client.end({ timeout: 1 });
    }
  });

  it("releases the locks of a transaction whose client went silent, such as the disclosure chain's", {
    timeout: 30_000,
  }, async () => {
    const relay = await cuttableRelay(new URL(inject("databaseUrl")));
    const silent = createDb(relay.url.toString(), { max: 1, statementTimeoutS: 1 });
    const other = createDb(inject("databaseUrl"), { max: 1 });
    const key = 7_000_000_000 + Math.floor(Math.random() * 1_000_000);
    try {
      let locked!: () => void;
      const holding = new Promise<void>((resolve) => (locked = resolve));
      const transaction = silent
        .transaction(async (tx) => {
          await sqlOf(tx)`select pg_advisory_xact_lock(${key})`;
          relay.cut(true);
          locked();
          await new Promise((resolve) => setTimeout(resolve, 20_000));
        })
        .catch(() => undefined);
      await holding;
      const started = Date.now();
      await other.$client`select pg_advisory_xact_lock(${key})`;
      // The server ended the idle transaction after 1 s; without the limit this waits for TCP.
      expect(Date.now() - started).toBeLessThan(5_000);
      void transaction;
    } finally {
      await other.$client.end({ timeout: 1 });
      await silent.$client.end({ timeout: 0 });
      await relay.close();
    }
  });
});
