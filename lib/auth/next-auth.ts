import { createHmac } from "node:crypto";
import NextAuth, { CredentialsSignin, type NextAuthConfig } from "next-auth";
import Credentials from "next-auth/providers/credentials";
import { env, requireEnv } from "../env";
import { getDb } from "../db/client";
import { CONTROL_CHARACTERS } from "../characters";
import { clientIp } from "../client-address";
import { rateLimiters } from "../limits/rate-limit";
import { sameOriginPath } from "../redirect-target";
import { accountByEmail } from "./accounts";
import { verifyPassword } from "./passwords";
import { endSessionsOf } from "./sessions";
import { errorFields, log } from "../log";

declare module "next-auth" {
  /** What authorize() hands to the jwt callback at sign-in. */
  interface User {
    sessionVersion?: number;
  }
  /** The user's `session_version` when this session began; currentUser() compares it with the row's. */
  interface Session {
    sessionVersion?: number;
  }
}

/** Shown on the sign-in page as "Too many attempts". */
class TooManyAttempts extends CredentialsSignin {
  override code = "rate_limited";
}

/**
 * Credentials against `users` (argon2id). Failed attempts spend two budgets, one per account and
 * one per client address; past either, sign-in is refused before any password is checked.
 */
async function authorizeCredentials(credentials: Partial<Record<string, unknown>>, request: Request) {
  const email = typeof credentials.email === "string" ? credentials.email.trim().toLowerCase() : "";
  const password = typeof credentials.password === "string" ? credentials.password : "";
  // A control character cannot be in any account's email; refused here, it never reaches SQL.
  if (!email || !password || email.length > 320 || password.length > 1024 || CONTROL_CHARACTERS.test(email))
    return null;
  const limits = rateLimiters();
  const ip = clientIp(request);
  const [perAccount, perIp] = await Promise.all([
    limits.signInFailuresPerAccount.peek(email),
    limits.authFailuresPerIp.peek(ip),
  ]);
  // Checked before the password: once the allowed failures are spent, even the right one waits.
  if (perAccount.remaining === 0 || perIp.remaining === 0) throw new TooManyAttempts();
  const account = await accountByEmail(getDb(), email);
  const valid = (await verifyPassword(account?.password_hash ?? null, password)) && account && !account.disabled_at;
  if (!valid) {
    await Promise.all([limits.signInFailuresPerAccount.consume(email), limits.authFailuresPerIp.consume(ip)]);
    return null;
  }
  return { id: account.id, email: account.email, name: account.name, sessionVersion: account.session_version };
}

function config(): NextAuthConfig {
  const e = env();
  const oidc =
    e.AUTH_OIDC_ISSUER && e.AUTH_OIDC_ID && e.AUTH_OIDC_SECRET
      ? [
          {
            id: "oidc",
            name: "Single sign-on",
            type: "oidc" as const,
            issuer: e.AUTH_OIDC_ISSUER,
            clientId: e.AUTH_OIDC_ID,
            clientSecret: e.AUTH_OIDC_SECRET,
          },
        ]
      : [];
  return {
    // Derived, so one APP_SECRET serves cursors and sessions without reusing the same key for both.
    secret: createHmac("sha256", requireEnv("APP_SECRET")).update("das-portal-session-v1").digest("hex"),
    trustHost: true,
    // A wrong password is an expected outcome, not an error with a stack trace; nothing secret is logged.
    logger: {
      error(error) {
        // By `type`: the build minifies class names, so `name` is not "CredentialsSignin" there.
        if ((error as { type?: string }).type === "CredentialsSignin") log.warn("portal sign-in refused");
        else log.error("auth error", errorFields(error));
      },
      warn: () => {},
    },
    session: { strategy: "jwt", maxAge: 8 * 60 * 60 },
    pages: { signIn: "/login", error: "/login" },
    providers: [
      Credentials({
        credentials: { email: { label: "Email" }, password: { label: "Password", type: "password" } },
        authorize: authorizeCredentials,
      }),
      ...oidc,
    ],
    callbacks: {
      // Every redirect Auth.js makes (after sign-in, OIDC or credentials, and sign-out) stays on this site.
      redirect({ url, baseUrl }) {
        const path = sameOriginPath(url, baseUrl);
        return path ? `${baseUrl}${path}` : `${baseUrl}/`;
      },
      // OIDC signs in only people an admin has already created (matched by email), never new accounts.
      async signIn({ account, profile }) {
        if (account?.provider !== "oidc") return true;
        const known = typeof profile?.email === "string" ? await accountByEmail(getDb(), profile.email) : undefined;
        return Boolean(known && !known.disabled_at);
      },
      // At sign-in the token takes the user's id and session version; later calls keep them as they are.
      async jwt({ token, user, account, profile }) {
        if (account?.provider === "oidc" && typeof profile?.email === "string") {
          const known = await accountByEmail(getDb(), profile.email);
          token.uid = known?.id;
          token.sv = known?.session_version;
        } else if (user?.id) {
          token.uid = user.id;
          token.sv = user.sessionVersion;
        }
        return token;
      },
      // The session names the user and its version only; role and organisation are read fresh on every page and action.
      session({ session, token }) {
        if (typeof token.uid === "string") session.user.id = token.uid;
        if (typeof token.sv === "number") session.sessionVersion = token.sv;
        return session;
      },
    },
    events: {
      // Signing out (the portal's button or Auth.js's own endpoint) ends every session of the user, not only this browser's.
      async signOut(message) {
        const token = "token" in message ? message.token : null;
        if (typeof token?.uid === "string" && typeof token.sv === "number")
          await endSessionsOf(getDb(), token.uid, token.sv);
      },
    },
  };
}

export const { handlers, auth, signIn, signOut } = NextAuth(() => config());

export const oidcEnabled = () => Boolean(env().AUTH_OIDC_ISSUER && env().AUTH_OIDC_ID && env().AUTH_OIDC_SECRET);
