import { forbidden, notFound, redirect, unstable_rethrow } from "next/navigation";
import type { z } from "zod";
import { sessionUser } from "../auth/accounts";
import { auth } from "../auth/next-auth";
import type { UserPrincipal } from "../auth/principal";
import type { Ctx } from "../context";
import { getDb, getReplicaDb } from "../db/client";
import { AppError, type ErrorCode } from "../errors";
import { rateLimiters } from "../limits/rate-limit";
import { mayEnter, type Area } from "../portal/access";
import { parseSearchParams, type SearchParams } from "./query";
import { signInPath } from "../redirect-target";
import { newRequestId } from "./request-id";
import { toAppError } from "./respond";

/**
 * The signed-in user as the database has them now, or null: a disabled account, or a session begun
 * before the user's sessions were last ended (sign-out, disabling, a role change; lib/auth/sessions.ts),
 * counts at once.
 */
export async function currentUser(): Promise<UserPrincipal | null> {
  try {
    const session = await auth();
    const uid = session?.user?.id;
    if (!uid) return null;
    return await sessionUser(getDb(), uid, session.sessionVersion);
  } catch (error) {
    unexpected(error);
  }
}

/**
 * What the portal throws for an error it did not expect. Next logs whatever a page or route
 * handler throws as it is, and a database error's message can hold the failed query's parameters
 * or a quoted value. So the error goes to our log as `errorFields` allows (never a parameter or a
 * value) and Next gets an error whose message holds nothing of the data. Next's own signals
 * (redirect, not found, forbidden) and our AppErrors, whose messages we wrote, pass as they are.
 */
function unexpected(error: unknown): never {
  unstable_rethrow(error);
  if (error instanceof AppError) throw error;
  const answer = toAppError(error, newRequestId());
  throw new AppError(answer.code, answer.message, { headers: answer.headers });
}

/**
 * The first line of every portal page: signed out → /login (back here afterwards); signed in but
 * not allowed in this area → the 403 page. Returns the context for the page's lib verbs.
 */
export async function pageContext(area: Area, path: string): Promise<Ctx<UserPrincipal>> {
  const user = await currentUser();
  if (!user) redirect(signInPath(path));
  if (!mayEnter(user, area)) forbidden();
  return contextFor(area, user);
}

/**
 * A page's or route's context. The review area's reads of the log go to the read replica when
 * there is one (DATABASE_REPLICA_URL): its pages say as of when; everything else reads the primary.
 */
function contextFor(area: Area, user: UserPrincipal): Ctx<UserPrincipal> {
  const replica = area === "review" ? getReplicaDb() : null;
  return { db: getDb(), principal: user, requestId: newRequestId(), ...(replica ? { replica } : {}) };
}

/** A short plain-text answer, for portal route handlers whose success is a file, not a page. */
export function plainText(status: number, text: string): Response {
  return new Response(`${text}\n`, {
    status,
    headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" },
  });
}

const REFUSED: Record<Area, string> = {
  catalog: "This is for members of a licensed organisation.",
  review: "The disclosure log is for reviewers and admins.",
  admin: "This is for admins.",
};

/** The first line of a portal route handler (exports, file lists): its context, or the 401/403 to send instead. */
export async function routeContext(area: Area): Promise<Ctx<UserPrincipal> | Response> {
  const user = await currentUser();
  if (!user) return plainText(401, "Sign in first.");
  if (!mayEnter(user, area)) return plainText(403, REFUSED[area]);
  return contextFor(area, user);
}

export type ActionResult<T> =
  | { ok: true; data: T }
  | { ok: false; error: { code: ErrorCode; message: string; request_id: string } };

/**
 * The body of every server action: the same area check as the pages, the user's per-minute budget
 * (the API's limiter and number, per user rather than per key: every action writes something, a
 * download or a preview into the disclosure log among them), then the lib verb; errors come back
 * as data (the envelope's fields) for the form to show, never as a thrown 500.
 */
export async function runAction<T>(
  area: Area,
  verb: (ctx: Ctx<UserPrincipal>) => Promise<T>,
): Promise<ActionResult<T>> {
  const requestId = newRequestId();
  const user = await currentUser();
  if (!user)
    return {
      ok: false,
      error: { code: "unauthorized", message: "Your session has ended. Sign in again.", request_id: requestId },
    };
  if (!mayEnter(user, area)) {
    return {
      ok: false,
      error: { code: "forbidden", message: "Your role does not allow this action.", request_id: requestId },
    };
  }
  try {
    const limit = await rateLimiters().perUser.consume(user.userId);
    if (limit.limited)
      return {
        ok: false,
        error: {
          code: "rate_limited",
          message: `Too many actions from your account: the limit is ${limit.limit} per minute. Try again in ${limit.resetSeconds} s.`,
          request_id: requestId,
        },
      };
    return { ok: true, data: await verb({ db: getDb(), principal: user, requestId }) };
  } catch (error) {
    const appError = toAppError(error, requestId);
    return { ok: false, error: { code: appError.code, message: appError.message, request_id: requestId } };
  }
}

/**
 * A page's data. A domain refusal shows as the page Next can give it: 403 as the forbidden page,
 * 401 as the way to /login, and every other 4xx as the not-found page. Next lets a page answer only
 * 401, 403 and 404, so a value a page cannot use (400) reads as "no such page"; addresses that no
 * page could use get a real 400 from the proxy before this. Anything else is the error boundary's.
 */
export async function pageData<T>(load: Promise<T>): Promise<T> {
  try {
    return await load;
  } catch (error) {
    if (error instanceof AppError && error.status >= 400 && error.status < 500) {
      if (error.status === 403) forbidden();
      if (error.status === 401) redirect("/login");
      notFound();
    }
    unexpected(error);
  }
}

export type { SearchParams };

/**
 * A page's search params, parsed with its schema by the rules of every query of the service (no
 * repeated parameter, no control characters); a refusal is shown as `pageData` shows it.
 */
export function pageSearch<S extends z.ZodObject>(searchParams: Promise<SearchParams>, schema: S): Promise<z.infer<S>> {
  return pageData(searchParams.then((params) => parseSearchParams(params, schema)));
}

/** A portal route handler's data, or the plain-text answer to a domain refusal (4xx) instead. */
export async function routeData<T>(load: Promise<T>): Promise<T | Response> {
  try {
    return await load;
  } catch (error) {
    if (error instanceof AppError && error.status >= 400 && error.status < 500)
      return plainText(error.status, error.message);
    unexpected(error);
  }
}

/** A portal route handler's query by the same rules, or the plain-text 400 to send instead. */
export function routeSearch<S extends z.ZodObject>(request: Request, schema: S): z.infer<S> | Response {
  try {
    return parseSearchParams(new URL(request.url).searchParams, schema);
  } catch (error) {
    if (error instanceof AppError) return plainText(error.status, error.message);
    throw error;
  }
}
