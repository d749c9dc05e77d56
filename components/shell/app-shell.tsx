import Link from "next/link";
import type { ReactNode } from "react";
import type { UserPrincipal } from "@/lib/auth/principal";
import { areasOf, type Area } from "@/lib/portal/access";
import { Badge } from "../ui/badge";
import { buttonClass, LinkButton } from "../ui/button";
import { AdminMenu, type AdminMenuGroup } from "./admin-menu";
import { NavLink } from "./nav-link";

const LINKS: Record<Exclude<Area, "admin">, { href: string; label: string }[]> = {
  catalog: [
    { href: "/datasets", label: "Datasets" },
    { href: "/requests", label: "Requests" },
    { href: "/notices", label: "Notices" },
  ],
  review: [
    { href: "/review/overview", label: "Overview" },
    { href: "/review/disclosures", label: "Disclosure log" },
    { href: "/review/withdrawals", label: "Withdrawals" },
  ],
};

/** The admin's eleven pages, grouped under one "Admin" item: side by side they pushed the header past 1440 px. */
const ADMIN_GROUPS: AdminMenuGroup[] = [
  {
    label: "Accounts",
    links: [
      { href: "/admin/organizations", label: "Organisations" },
      { href: "/admin/users", label: "Users" },
      { href: "/admin/keys", label: "API keys" },
    ],
  },
  {
    label: "Licensing",
    links: [
      { href: "/admin/licences", label: "Licences" },
      { href: "/admin/licence-use", label: "Licence use" },
      { href: "/admin/requests", label: "Requests" },
      { href: "/admin/terms", label: "Terms" },
    ],
  },
  {
    label: "Data",
    links: [
      { href: "/admin/datasets", label: "Datasets" },
      { href: "/admin/withdrawals", label: "Withdraw" },
    ],
  },
  {
    label: "Service",
    links: [
      { href: "/admin/webhooks", label: "Webhooks" },
      { href: "/admin/audit", label: "Admin audit" },
    ],
  },
];

/**
 * The portal's frame: product name, the navigation the user's role allows, who is signed in, and
 * on Notices how many of the organisation's notices are not acknowledged yet.
 */
export function AppShell({
  user,
  signOut,
  outstandingNotices = 0,
  children,
}: {
  user: UserPrincipal | null;
  signOut: () => Promise<void>;
  outstandingNotices?: number;
  children: ReactNode;
}) {
  const areas = user ? areasOf(user) : [];
  const links = areas.flatMap((area) => (area === "admin" ? [] : LINKS[area]));
  return (
    <div className="flex min-h-screen flex-col">
      <a
        href="#main"
        className="sr-only focus:not-sr-only focus:absolute focus:left-4 focus:top-2 focus:z-50 focus:rounded focus:bg-white focus:px-3 focus:py-2 focus:shadow"
      >
        Skip to content
      </a>
      <header className="border-b border-slate-200 bg-white">
        {/*
          One line from lg up, every item whole (an admin's pages are one "Admin" item); below lg the
          nav has a line of its own and wraps rather than scroll, so nothing is hidden off its edge.
          `relative`: below lg the Admin panel spans this row.
        */}
        <div className="relative mx-auto flex max-w-7xl flex-wrap items-center gap-x-4 gap-y-2 px-4 py-3 sm:px-6 lg:flex-nowrap lg:px-8">
          <Link href="/" className="flex shrink-0 items-center gap-2 whitespace-nowrap font-semibold text-slate-900">
            <span
              aria-hidden="true"
              className="grid h-7 w-7 place-items-center rounded-md bg-brand-600 text-xs font-bold text-white"
            >
              DA
            </span>
            Dataset Access
          </Link>
          <nav
            aria-label="Main"
            className="order-last -mx-1 flex w-full flex-wrap items-center gap-1 lg:order-none lg:mx-0 lg:w-auto lg:min-w-0 lg:flex-1"
          >
            {links.map((link) => (
              <NavLink key={link.href} href={link.href}>
                {link.label}
                {link.href === "/notices" && outstandingNotices > 0 ? (
                  <span className="ml-1.5">
                    <Badge tone="red">
                      {outstandingNotices}
                      <span className="sr-only"> not acknowledged</span>
                    </Badge>
                  </span>
                ) : null}
              </NavLink>
            ))}
            {areas.includes("admin") ? <AdminMenu groups={ADMIN_GROUPS} /> : null}
            <NavLink href="/docs/api">API docs</NavLink>
          </nav>
          <div className="ml-auto flex shrink-0 items-center gap-3">
            {user ? (
              <>
                <div className="hidden text-right sm:block">
                  <p className="max-w-48 truncate text-sm font-medium text-slate-800" title={user.email}>
                    {user.email}
                  </p>
                  <p className="text-xs text-slate-500">
                    <Badge tone={user.role === "admin" ? "brand" : user.role === "reviewer" ? "blue" : "neutral"}>
                      {user.role}
                    </Badge>
                  </p>
                </div>
                <form action={signOut}>
                  <button
                    type="submit"
                    className={buttonClass("secondary", "sm")}
                    title="Ends your sessions on every device"
                  >
                    Sign out
                  </button>
                </form>
              </>
            ) : (
              <LinkButton href="/login" size="sm">
                Sign in
              </LinkButton>
            )}
          </div>
        </div>
      </header>
      <main id="main" className="mx-auto w-full max-w-7xl flex-1 px-4 py-6 sm:px-6 lg:px-8">
        {children}
      </main>
      <footer className="border-t border-slate-200 bg-white py-4 text-center text-xs text-slate-500">
        Every download and every preview is recorded in a tamper-evident disclosure log.
      </footer>
    </div>
  );
}
