import net from "node:net";
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
          setTimeout(() => void getDb().$client`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${name}`.then(), 300);
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
});
