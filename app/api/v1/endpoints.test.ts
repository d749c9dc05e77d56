import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "@/lib/api/openapi";
import { API_ENDPOINTS } from "./endpoints";

const here = path.dirname(new URL(import.meta.url).pathname);
/** The route files under app/api/v1, as URL paths of their folders. */
const routeFiles = readdirSync(here, { recursive: true, encoding: "utf8" })
  .filter((file) => path.basename(file) === "route.ts")
  .map((file) => `/api/v1/${path.dirname(file).split(path.sep).join("/")}`);
const shape = (template: string) => template.replace(/\[[^\]]+\]|\{[^}]+\}/g, "{}");

describe("API_ENDPOINTS, what the dispatcher answers before Next", () => {
  it("lists every route file under app/api/v1, once, with that file's exports", async () => {
    expect(API_ENDPOINTS.map((e) => e.path).sort()).toEqual([...routeFiles].sort());
    for (const endpoint of API_ENDPOINTS) {
      const module = await import(
        /* @vite-ignore */ path.join(here, endpoint.path.slice("/api/v1".length), "route.ts")
      );
      expect(endpoint.methods.GET).toBe(module.GET);
      expect(endpoint.methods.POST).toBe(module.POST);
    }
  });

  it("serves exactly the paths the OpenAPI document describes", () => {
    const documented = Object.keys(openApiDocument().paths ?? {}).map(shape);
    expect(API_ENDPOINTS.map((e) => shape(e.path)).sort()).toEqual(documented.sort());
  });
});
