"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { useEffect, useId, useRef } from "react";
import { cn } from "../ui/cn";

export type AdminMenuGroup = { label: string; links: { href: string; label: string }[] };

const isAt = (pathname: string, href: string) => pathname === href || pathname.startsWith(`${href}/`);

/**
 * The admin's pages behind one "Admin" item of the main navigation, so the header keeps one line
 * at desktop widths. A disclosure (`<details>`), not an ARIA menu: its items are links, it opens
 * and closes before the page hydrates and without JavaScript at all, and a screen reader announces
 * it as the expandable control it is. Once hydrated it also closes on a click elsewhere, on Escape
 * (focus back on "Admin"), when focus leaves it, and after a link in it is followed: the layout
 * stays mounted across client navigations, so an open panel would otherwise stay over the new page.
 */
export function AdminMenu({ groups }: { groups: AdminMenuGroup[] }) {
  const pathname = usePathname();
  const details = useRef<HTMLDetailsElement>(null);
  const summary = useRef<HTMLElement>(null);
  const panelId = useId();
  const active = groups.some((g) => g.links.some((l) => isAt(pathname, l.href)));

  // Closed when the path changes, not when the menu mounts: a click on "Admin" before the page
  // hydrated opens the native disclosure, and hydration must leave it open (it used to close it
  // under the user's pointer).
  const shownPath = useRef(pathname);
  useEffect(() => {
    if (shownPath.current === pathname) return;
    shownPath.current = pathname;
    if (details.current) details.current.open = false;
  }, [pathname]);

  useEffect(() => {
    const close = () => {
      if (details.current) details.current.open = false;
    };
    const onPointerDown = (event: PointerEvent) => {
      if (details.current?.open && !details.current.contains(event.target as Node)) close();
    };
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key !== "Escape" || !details.current?.open) return;
      const focusInside = details.current.contains(document.activeElement);
      close();
      if (focusInside) summary.current?.focus();
    };
    document.addEventListener("pointerdown", onPointerDown);
    document.addEventListener("keydown", onKeyDown);
    return () => {
      document.removeEventListener("pointerdown", onPointerDown);
      document.removeEventListener("keydown", onKeyDown);
    };
  }, []);

  return (
    <details
      ref={details}
      className="group lg:relative"
      onBlur={(event) => {
        // Tabbing past the last link leaves the panel: it closes rather than cover the page.
        const next = event.relatedTarget as Node | null;
        if (next && details.current && !details.current.contains(next)) details.current.open = false;
      }}
    >
      <summary
        ref={summary}
        aria-controls={panelId}
        className={cn(
          "flex cursor-pointer list-none items-center gap-1 whitespace-nowrap rounded-md px-3 py-1.5 text-sm font-medium transition-colors [&::-webkit-details-marker]:hidden",
          active ? "bg-brand-50 text-brand-700" : "text-slate-600 hover:bg-slate-100 hover:text-slate-900",
        )}
      >
        Admin
        <svg
          aria-hidden="true"
          viewBox="0 0 20 20"
          fill="currentColor"
          className="h-4 w-4 transition-transform group-open:rotate-180"
        >
          <path
            fillRule="evenodd"
            d="M5.23 7.21a.75.75 0 0 1 1.06.02L10 11.17l3.71-3.94a.75.75 0 1 1 1.08 1.04l-4.25 4.5a.75.75 0 0 1-1.08 0l-4.25-4.5a.75.75 0 0 1 .02-1.06Z"
            clipRule="evenodd"
          />
        </svg>
      </summary>
      {/* Below lg the panel spans the header (the nav has a line of its own there); from lg it hangs under "Admin". */}
      <div
        id={panelId}
        className="absolute inset-x-4 top-full z-40 mt-1 grid gap-x-6 gap-y-4 rounded-lg bg-white p-4 shadow-lg ring-1 ring-slate-200 sm:inset-x-6 sm:grid-cols-2 lg:inset-x-auto lg:left-0 lg:mt-2 lg:w-[28rem]"
      >
        {groups.map((group) => {
          const headingId = `${panelId}-${group.label.toLowerCase()}`;
          return (
            <div key={group.label}>
              <p id={headingId} className="px-3 text-xs font-semibold uppercase tracking-wide text-slate-500">
                {group.label}
              </p>
              <ul aria-labelledby={headingId} className="mt-1 space-y-0.5">
                {group.links.map((link) => {
                  const current = isAt(pathname, link.href);
                  return (
                    <li key={link.href}>
                      <Link
                        href={link.href}
                        aria-current={current ? "page" : undefined}
                        className={cn(
                          "block rounded-md px-3 py-1.5 text-sm font-medium",
                          current
                            ? "bg-brand-50 text-brand-700"
                            : "text-slate-700 hover:bg-slate-100 hover:text-slate-900",
                        )}
                      >
                        {link.label}
                      </Link>
                    </li>
                  );
                })}
              </ul>
            </div>
          );
        })}
      </div>
    </details>
  );
}
