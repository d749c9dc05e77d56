import { describe, expect, it } from "vitest";
import { clientIp, clientProto, forwardedHop } from "./client-address";

const hop = (trusted: number, forwardedFor?: string, forwardedProto?: string, peer = "10.0.0.9", encrypted = false) =>
  forwardedHop({ forwardedFor, forwardedProto, peer, encrypted, trusted });

describe("forwardedHop: the address and scheme read from the same trusted hop", () => {
  it("with no proxy trusted, ignores what the client claims and takes the socket", () => {
    expect(hop(0, "203.0.113.7", "https")).toEqual({ client: "10.0.0.9", proto: "http" });
    expect(hop(0, undefined, undefined, "::1", true)).toEqual({ client: "::1", proto: "https" });
  });

  it("with one proxy, takes the entries it appended (the right-most), never the client's own further left", () => {
    expect(hop(1, "198.51.100.1, 203.0.113.7", "https, http")).toEqual({ client: "203.0.113.7", proto: "http" });
    expect(hop(1, "203.0.113.7", "https")).toEqual({ client: "203.0.113.7", proto: "https" });
    // A request that did not come through the proxy has no entry: the socket's peer, its scheme.
    expect(hop(1, undefined, undefined)).toEqual({ client: "10.0.0.9", proto: "http" });
  });

  it("with two proxies, reads one hop further left, and a scheme set once by the edge proxy", () => {
    expect(hop(2, "6.6.6.6, 198.51.100.1, 192.0.2.5", "https")).toEqual({ client: "198.51.100.1", proto: "https" });
    expect(hop(2, "6.6.6.6, 198.51.100.1, 192.0.2.5", "http, https, http")).toEqual({
      client: "198.51.100.1",
      proto: "https",
    });
    // Fewer entries than trusted proxies: the left-most there is.
    expect(hop(3, "198.51.100.1", "https")).toEqual({ client: "198.51.100.1", proto: "https" });
  });

  it("joins repeated header fields as one list", () => {
    expect(
      forwardedHop({
        forwardedFor: ["198.51.100.1", "203.0.113.7"],
        forwardedProto: undefined,
        peer: "10.0.0.9",
        encrypted: false,
        trusted: 1,
      }).client,
    ).toBe("203.0.113.7");
  });
});

describe("clientIp and clientProto read the right-most entry, which the guard has made the trusted one", () => {
  const request = (headers: Record<string, string>) => new Request("http://localhost/", { headers });
  it("reads the address and scheme", () => {
    expect(clientIp(request({ "x-forwarded-for": "::ffff:203.0.113.7" }))).toBe("203.0.113.7");
    expect(clientIp(request({ "x-forwarded-for": "not an address" }))).toBe("unknown");
    expect(clientProto(request({ "x-forwarded-proto": "HTTPS" }))).toBe("https");
    expect(clientProto(request({}))).toBeUndefined();
  });
});
