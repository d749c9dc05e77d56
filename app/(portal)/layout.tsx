import type { ReactNode } from "react";
import { AppShell } from "@/components/shell/app-shell";
import { currentUser } from "@/lib/http/portal";
import { getDb } from "@/lib/db/client";
import { mayEnter } from "@/lib/portal/access";
import { outstandingNotices } from "@/lib/notices/list-notices";
import { signOutAction } from "./actions";

export default async function PortalLayout({ children }: { children: ReactNode }) {
  const user = await currentUser();
  // The badge: notices of the member's organisation not acknowledged yet.
  const outstanding =
    user && mayEnter(user, "catalog")
      ? await outstandingNotices({ db: getDb(), principal: user, requestId: "layout" })
      : 0;
  return (
    <AppShell user={user} signOut={signOutAction} outstandingNotices={outstanding}>
      {children}
    </AppShell>
  );
}
