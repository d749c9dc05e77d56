import type { Metadata } from "next";
import { z } from "zod";
import { redirect } from "next/navigation";
import { buttonClass } from "@/components/ui/button";
import { oidcEnabled } from "@/lib/auth/next-auth";
import { currentUser, pageSearch, type SearchParams } from "@/lib/http/portal";
import { sameOriginPath } from "@/lib/redirect-target";
import { homeOf } from "@/lib/portal/access";
import { signInWithOidc } from "./actions";
import { LoginForm } from "./login-form";

export const metadata: Metadata = { title: "Sign in" };

const Search = z.object({ callbackUrl: z.string().optional(), error: z.string().optional() });

export default async function LoginPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const search = await pageSearch(searchParams, Search);
  // The form carries only a path on this site back to the server; the action checks it again.
  const callbackUrl = sameOriginPath(search.callbackUrl) ?? "/";
  const error = search.error;
  const user = await currentUser();
  if (user) redirect(homeOf(user));
  return (
    <main className="flex min-h-screen items-center justify-center px-4 py-12">
      <div className="w-full max-w-sm">
        <div className="mb-6 flex flex-col items-center text-center">
          <span
            aria-hidden="true"
            className="grid h-10 w-10 place-items-center rounded-lg bg-brand-600 text-sm font-bold text-white"
          >
            DA
          </span>
          <h1 className="mt-3 text-xl font-semibold text-slate-900">Sign in to Dataset Access</h1>
          <p className="mt-1 text-sm text-slate-500">Licensed robotics datasets, downloads and their disclosure log.</p>
        </div>
        <div className="rounded-lg bg-white p-6 shadow-sm ring-1 ring-slate-200">
          {error === "AccessDenied" ? (
            <p role="alert" className="mb-4 rounded-md bg-red-50 px-3 py-2 text-sm text-red-800">
              Single sign-on worked, but no active account here has that email. Ask an administrator.
            </p>
          ) : null}
          <LoginForm callbackUrl={callbackUrl} />
          {oidcEnabled() ? (
            <form action={signInWithOidc} className="mt-4 border-t border-slate-200 pt-4">
              <input type="hidden" name="callbackUrl" value={callbackUrl} />
              <button type="submit" className={buttonClass("secondary", "md", "w-full")}>
                Continue with single sign-on
              </button>
            </form>
          ) : null}
        </div>
      </div>
    </main>
  );
}
