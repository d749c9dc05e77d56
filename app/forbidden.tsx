import Link from "next/link";

export default function Forbidden() {
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="max-w-md text-center">
        <p className="text-sm font-semibold text-brand-600">403</p>
        <h1 className="mt-2 text-2xl font-semibold text-slate-900">This page is not for your role</h1>
        <p className="mt-2 text-sm text-slate-600">
          Your account is signed in, but its role does not give access here. If you need it, ask an administrator.
        </p>
        <Link href="/" className="mt-6 inline-block text-sm font-medium text-brand-700 hover:underline">
          Go to your start page
        </Link>
      </div>
    </main>
  );
}
