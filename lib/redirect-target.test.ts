import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sameOriginPath, signInPath } from "./redirect-target";

const ORIGIN = "http://127.0.0.1:3000";

/** Where a browser goes when sent `target` from a page of `origin` (browsers use the same WHATWG parser). */
const landsOn = (target: string, origin = ORIGIN) => new URL(target, `${origin}/login`).origin;

// Each of these leaves the site in some browser, or runs script, or hides what it is.
const HOSTILE = [
  "//evil.example",
  "///evil.example",
  "////evil.example/x",
  "/\\evil.example",
  "\\\\evil.example",
  "\\/evil.example",
  "/\t/evil.example",
  "/\n/evil.example",
  "/\r\n/evil.example",
  "\t//evil.example",
  " //evil.example",
  "\u0000//evil.example",
  "/\u0000/evil.example",
  "/\u007f/evil.example",
  "/\u0085/evil.example",
  "/.//evil.example",
  "/./\\evil.example",
  "/a/..//evil.example",
  "http://evil.example",
  "https://evil.example/datasets",
  "HTTP://EVIL.EXAMPLE",
  "https:evil.example",
  "http://127.0.0.1:3000@evil.example/",
  "http://127.0.0.1:3001/",
  "https://127.0.0.1:3000/",
  "ftp://127.0.0.1:3000/",
  "javascript:alert(document.cookie)",
  "JaVaScRiPt:alert(1)",
  "java\tscript:alert(1)",
  " javascript:alert(1)",
  "data:text/html,<script>alert(1)</script>",
  "vbscript:msgbox(1)",
  `blob:${ORIGIN}/b0a7f5a2-0000-4000-8000-000000000000`,
  "http://[::1]/",
  "",
  "x".repeat(5000),
];

describe("sameOriginPath", () => {
  it.each(HOSTILE.map((t) => [JSON.stringify(t), t]))("refuses %s", (_, target) => {
    expect(sameOriginPath(target, ORIGIN)).toBeNull();
    expect(sameOriginPath(target)).toBeNull();
  });

  it("refuses what is not a string", () => {
    for (const value of [undefined, null, 42, ["/datasets"], { toString: () => "/datasets" }])
      expect(sameOriginPath(value, ORIGIN)).toBeNull();
  });

  it("accepts paths and same-origin URLs, answering the parsed path with query and fragment", () => {
    expect(sameOriginPath("/datasets", ORIGIN)).toBe("/datasets");
    expect(sameOriginPath("/datasets/kpp/1.1.0?outcome=failure&cursor=abc#episodes", ORIGIN)).toBe(
      "/datasets/kpp/1.1.0?outcome=failure&cursor=abc#episodes",
    );
    expect(sameOriginPath(`${ORIGIN}/review/disclosures?org=acme`, ORIGIN)).toBe("/review/disclosures?org=acme");
    expect(sameOriginPath("/a/../admin/users", ORIGIN)).toBe("/admin/users");
    expect(sameOriginPath("/%2F%2Fevil.example", ORIGIN)).toBe("/%2F%2Fevil.example");
    expect(sameOriginPath("/datasets?q=a b", ORIGIN)).toBe("/datasets?q=a%20b");
    // Without an origin only paths pass: an absolute URL of any site is refused.
    expect(sameOriginPath("/admin/keys")).toBe("/admin/keys");
    expect(sameOriginPath(`${ORIGIN}/admin/keys`)).toBeNull();
  });

  it("never answers a target that a browser would take off the site, whatever the input", () => {
    const pieces = fc.constantFrom(
      "/",
      "//",
      "\\",
      "/\\",
      "\\/",
      ".",
      "..",
      "./",
      "../",
      ":",
      "@",
      "?",
      "#",
      "%2F",
      "%5C",
      "%09",
      "\t",
      "\n",
      "\r",
      " ",
      "\u0000",
      "\u001f",
      "\u007f",
      "\u00a0",
      "\u2028",
      "http:",
      "https:",
      "javascript:",
      "evil.example",
      "127.0.0.1:3000",
      "datasets",
    );
    const targets = fc.oneof(
      fc.string({ unit: "binary", maxLength: 40 }),
      fc.array(pieces, { maxLength: 12 }).map((p) => p.join("")),
      fc.webUrl(),
      fc.webPath(),
    );
    fc.assert(
      fc.property(targets, fc.constantFrom(ORIGIN, undefined), (target, origin) => {
        const path = sameOriginPath(target, origin);
        if (path === null) return;
        expect(path.startsWith("/") && !path.startsWith("//")).toBe(true);
        expect(path).not.toMatch(/[\u0000-\u001f\u007f-\u009f\\]/);
        // A path-absolute reference: it stays on whichever origin it is sent from.
        expect(landsOn(path)).toBe(ORIGIN);
        expect(landsOn(path, "https://das.example.com")).toBe("https://das.example.com");
        // What a browser makes of the raw input is on the site too (the answer is never a "cleaned" other site).
        expect(landsOn(target)).toBe(ORIGIN);
      }),
      { numRuns: 5000 },
    );
  });

  it("refuses every URL of another origin", () => {
    fc.assert(
      fc.property(fc.webUrl({ withQueryParameters: true, withFragments: true }), (url) => {
        fc.pre(new URL(url).origin !== ORIGIN);
        expect(sameOriginPath(url, ORIGIN)).toBeNull();
      }),
      { numRuns: 2000 },
    );
  });

  it("keeps every same-origin path as the parser serialises it", () => {
    fc.assert(
      fc.property(fc.webPath(), fc.webQueryParameters(), (path, query) => {
        const target = `/${path.replace(/^\/+/, "")}${query ? `?${query}` : ""}`;
        const parsed = new URL(target, ORIGIN);
        fc.pre(!parsed.pathname.startsWith("//"));
        expect(sameOriginPath(target, ORIGIN)).toBe(`${parsed.pathname}${parsed.search}`);
      }),
      { numRuns: 1000 },
    );
  });
});

describe("signInPath", () => {
  it("comes back to a path on this site, and to nothing else", () => {
    expect(signInPath("/review/disclosures/export?format=csv")).toBe(
      "/login?callbackUrl=%2Freview%2Fdisclosures%2Fexport%3Fformat%3Dcsv",
    );
    expect(signInPath("/")).toBe("/login");
    for (const target of HOSTILE) expect(signInPath(target)).toBe("/login");
  });
});
