import { describe, expect, it, vi } from "vitest";
import { hashPassword } from "../auth/passwords";
import { getDb } from "../db/client";
import { users } from "../db/schema";
import { AppError } from "../errors";
import { uniqueId } from "../testing/fixtures";
import { pageData, routeData } from "./portal";

// Next logs whatever a page or a route handler throws as it is; what the portal's entry points
// throw for an unexpected error must hold nothing of the data, whose cause went to our log as
// errorFields allows.

/** A failed insert whose driver error carries its parameters, an argon2id hash among them. */
async function failingInsert(): Promise<never> {
  const hash = await hashPassword("a long secret password");
  await getDb()
    .insert(users)
    .values({ id: uniqueId("usr"), email: "a\u0000b@x.example", role: "reviewer", passwordHash: hash });
  throw new Error("the insert should have failed");
}

async function logOf(work: () => Promise<unknown>): Promise<{ thrown: unknown; logged: string }> {
  const logged: string[] = [];
  const spy = vi.spyOn(process.stderr, "write").mockImplementation((text) => (logged.push(String(text)), true));
  try {
    const thrown = await work().then(
      () => expect.fail("expected a failure"),
      (e: unknown) => e,
    );
    return { thrown, logged: logged.join("") };
  } finally {
    spy.mockRestore();
  }
}

describe("the portal's entry points, on an error they did not expect", () => {
  it.each([
    ["pageData", () => pageData(failingInsert())],
    ["routeData", () => routeData(failingInsert())],
  ])("%s throws the envelope's 500 with no parameter in it, and logs the cause's kind", async (_name, work) => {
    const { thrown, logged } = await logOf(work);
    expect(thrown).toBeInstanceOf(AppError);
    expect(thrown).toMatchObject({ code: "internal_error", status: 500 });
    expect(`${(thrown as Error).message} ${(thrown as Error).stack} ${String((thrown as Error).cause)}`).not.toContain(
      "argon2id",
    );
    expect(logged).toContain("DrizzleQueryError <- PostgresError 22021");
    expect(logged).not.toContain("argon2id");
  });

  it("lets a refusal through as the page Next shows for it", async () => {
    // notFound() signals Next with an error of its own, which must reach Next untouched.
    const { thrown } = await logOf(() => pageData(Promise.reject(new AppError("not_found", "No such dataset."))));
    expect((thrown as { digest?: string }).digest).toBe("NEXT_HTTP_ERROR_FALLBACK;404");
  });
});
