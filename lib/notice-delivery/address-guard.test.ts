import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkWebhookAddresses, isNonPublicAddress, parseWebhookUrl } from "./address-guard";
import { postWebhook } from "./post-webhook";
import { mintWebhookSecret } from "./secret-box";

// SSRF: what a webhook URL may reach, at registration (checkWebhookAddresses) and at delivery
// (postWebhook's own lookup), against a real receiver on this machine.

describe("the address guard", () => {
  it("counts loopback, private, link-local, unique-local, unspecified and mapped addresses as not public", () => {
    for (const address of [
      "127.0.0.1",
      "127.8.9.10",
      "10.1.2.3",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "224.0.0.1",
      "::1",
      "::",
      "fe80::1",
      "fc00::1",
      "fd12:3456::1",
      "::ffff:127.0.0.1",
      "::ffff:10.0.0.1",
      "::ffff:a9fe:a9fe",
      "not an address",
    ])
      expect(isNonPublicAddress(address), address).toBe(true);
    for (const address of ["1.1.1.1", "8.8.8.8", "172.32.0.1", "93.184.216.34", "2606:4700:4700::1111"])
      expect(isNonPublicAddress(address), address).toBe(false);
  });

  it("counts site-local and discard-only addresses as not public, and their neighbours as public", () => {
    for (const address of [
      "fec0::1", // site-local, fec0::/10
      "feff:ffff::1",
      "100::1", // discard-only, 100::/64
      "100::ffff:ffff:ffff:ffff",
    ])
      expect(isNonPublicAddress(address), address).toBe(true);
    for (const address of ["100:0:0:1::1", "fe7f::1", "2001:4860:4860::8888"])
      expect(isNonPublicAddress(address), address).toBe(false);
  });

  it("judges an IPv6 address that embeds an IPv4 address by that address too", () => {
    for (const address of [
      "::127.0.0.1", // IPv4-compatible
      "::a9fe:a9fe", // IPv4-compatible, 169.254.169.254 in hex
      "::ffff:192.168.0.1", // IPv4-mapped
      "::ffff:0:10.0.0.1", // IPv4-translated
      "64:ff9b::127.0.0.1", // NAT64, well-known prefix
      "64:ff9b::7f00:1",
      "64:ff9b::a9fe:a9fe",
      "64:ff9b::c0a8:101",
      "64:ff9b:1::8.8.8.8", // local-use NAT64: refused whatever it embeds
      "2002:7f00:1::", // 6to4 of 127.0.0.1
      "2002:a00:1::1", // 6to4 of 10.0.0.1
      "2002:a9fe:a9fe:1::1", // 6to4 of 169.254.169.254
      "2002:c0a8:0101::", // 6to4 of 192.168.1.1
      "2001:0:4136:e378:8000:63bf:80ff:fffe", // Teredo, client 127.0.0.1 (inverted)
      "2001:0:a00:1::1", // Teredo, server 10.0.0.1
      "64:FF9B::7F00:1%eth0", // upper case, with a zone
    ])
      expect(isNonPublicAddress(address), address).toBe(true);
    for (const address of [
      "64:ff9b::8.8.8.8",
      "64:ff9b::101:101",
      "2002:808:808::1", // 6to4 of 8.8.8.8
      "::ffff:1.1.1.1",
      "2001:0:4136:e378:8000:63bf:f7f7:f7f7", // Teredo, client 8.8.8.8, server 65.54.227.120
      "2001:db8:7f00:1::", // documentation prefix, no embedded address
      "2a00:1450:4001:81b::200e",
    ])
      expect(isNonPublicAddress(address), address).toBe(false);
  });

  it("refuses a URL whose host is or resolves to such an address, unless local addresses are allowed", async () => {
    for (const url of [
      "http://127.0.0.1:8080/hook",
      "http://localhost/hook",
      "http://[::1]/hook",
      "http://169.254.169.254/latest/meta-data/",
      "https://10.0.0.5/hook",
      "http://[::ffff:127.0.0.1]/",
      "http://[64:ff9b::a9fe:a9fe]/latest/meta-data/",
      "http://[2002:a00:1::1]/hook",
      "http://2130706433/", // 127.0.0.1 written as one number: URL parsing normalises it
    ]) {
      await expect(checkWebhookAddresses(parseWebhookUrl(url), false), url).rejects.toMatchObject({
        code: "invalid_parameter",
        message: expect.stringContaining("WEBHOOKS_ALLOW_PRIVATE"),
      });
    }
    await expect(checkWebhookAddresses(parseWebhookUrl("http://127.0.0.1:8080/"), true)).resolves.toEqual([
      { address: "127.0.0.1", family: 4 },
    ]);
  });

  it("takes only absolute http(s) URLs without credentials", () => {
    for (const url of [
      "ftp://example.com/x",
      "file:///etc/passwd",
      "javascript:alert(1)",
      "/relative",
      "https://u:p@example.com/",
    ])
      expect(() => parseWebhookUrl(url), url).toThrow(/webhook URL/);
    expect(parseWebhookUrl(" https://hooks.example.com/das ").href).toBe("https://hooks.example.com/das");
  });
});

describe("a delivery", () => {
  let server: http.Server;
  let url: string;
  const seen: string[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push(req.url ?? "");
      if (req.url === "/redirect") res.writeHead(302, { location: "http://127.0.0.1/elsewhere" }).end();
      else if (req.url === "/slow") setTimeout(() => res.writeHead(200).end(), 2_000);
      else if (req.url === "/big") res.writeHead(500).end("x".repeat(1024 * 1024));
      else res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const message = (path: string) => ({
    url: `${url}${path}`,
    secret: mintWebhookSecret(),
    messageId: "msg_test",
    body: "{}",
  });

  it("to a receiver on 127.0.0.1 is refused without the local setting, and nothing reaches it", async () => {
    const before = seen.length;
    const outcome = await postWebhook(message("/hook"), { timeoutMs: 5_000, allowPrivate: false });
    expect(outcome).toMatchObject({ delivered: false, statusCode: null, error: expect.stringContaining("127.0.0.1") });
    expect(seen.length).toBe(before);
    // by name too: the connection's own lookup refuses what localhost resolves to
    const byName = await postWebhook(
      { ...message("/hook"), url: `http://localhost:${new URL(url).port}/hook` },
      { timeoutMs: 5_000, allowPrivate: false },
    );
    expect(byName).toMatchObject({ delivered: false, error: expect.stringMatching(/non-public/) });
    expect(seen.length).toBe(before);
  });

  it("is delivered with the setting; a redirect is not followed, a slow receiver times out, a long answer is cut", async () => {
    expect(await postWebhook(message("/hook"), { timeoutMs: 5_000, allowPrivate: true })).toMatchObject({
      delivered: true,
      statusCode: 204,
    });
    const redirected = await postWebhook(message("/redirect"), { timeoutMs: 5_000, allowPrivate: true });
    expect(redirected).toMatchObject({
      delivered: false,
      statusCode: 302,
      error: expect.stringContaining("not followed"),
    });
    expect(seen).not.toContain("/elsewhere");
    const slow = await postWebhook(message("/slow"), { timeoutMs: 300, allowPrivate: true });
    expect(slow).toMatchObject({ delivered: false, statusCode: null, error: "no answer within 300 ms" });
    expect(slow.durationMs).toBeLessThan(1_500);
    const big = await postWebhook(message("/big"), { timeoutMs: 5_000, allowPrivate: true });
    expect(big).toMatchObject({ delivered: false, statusCode: 500 });
    expect(big.error!.length).toBeLessThan(300);
  });
});
