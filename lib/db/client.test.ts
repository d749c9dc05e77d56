import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { env } from "@/lib/env";
import { toAppError } from "@/lib/http/respond";
import { createDb } from "./client";

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
});
