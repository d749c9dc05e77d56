"use server";

import { AuthError, CredentialsSignin } from "next-auth";
import { unstable_rethrow } from "next/navigation";
import { signIn } from "@/lib/auth/next-auth";
import { sameOriginPath } from "@/lib/redirect-target";

export type SignInState = { error?: string; email?: string };

/** Only a path on this site, never an open redirect; anything else goes to "/", which sends each user to their home. */
function safeCallback(value: FormDataEntryValue | null): string {
  return sameOriginPath(value) ?? "/";
}

export async function signInWithPassword(_previous: SignInState, form: FormData): Promise<SignInState> {
  const email = String(form.get("email") ?? "");
  try {
    await signIn("credentials", {
      email,
      password: String(form.get("password") ?? ""),
      redirectTo: safeCallback(form.get("callbackUrl")),
    });
    return {};
  } catch (error) {
    unstable_rethrow(error); // the redirect that a successful sign-in throws
    if (error instanceof CredentialsSignin && error.code === "rate_limited") {
      return {
        email,
        error: "Too many failed attempts for this account or from this network. Wait a minute and try again.",
      };
    }
    if (error instanceof AuthError) return { email, error: "That email and password do not match an active account." };
    throw error;
  }
}

export async function signInWithOidc(form: FormData): Promise<void> {
  await signIn("oidc", { redirectTo: safeCallback(form.get("callbackUrl")) });
}
