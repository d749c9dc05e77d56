import { describe, expect, it } from "vitest";
import { API_OPERATIONS } from "@/lib/api/operations";
import { API_ROUTES, PUBLIC_ROUTES, runAuthContract } from "@/lib/testing/auth-contract";

// The shared authentication and licence-scope contract, run against every /api/v1 endpoint.
// A new endpoint is one row in API_ROUTES (lib/testing/auth-contract.ts).
runAuthContract(API_ROUTES);

describe("the contract's table", () => {
  it("has a row for every operation of the API, and none for an operation that does not exist", () => {
    const operations = API_OPERATIONS.map((operation) => `${operation.method} ${operation.path}`).sort();
    const rows = API_ROUTES.map((row) => row.name);
    expect([...new Set([...rows, ...PUBLIC_ROUTES])].sort()).toEqual(operations);
  });
});
