import { createHmac } from "node:crypto";
import { base62 } from "../../ids";

/**
 * Demo credentials are derived from the installation's secret: stable across restarts (so the
 * launcher can print them every time) yet different on every machine, so no well-known demo
 * password or key exists anywhere.
 */
export function demoPassword(appSecret: string, email: string): string {
  return `demo-${base62(createHmac("sha256", appSecret).update(`demo-password:${email}`).digest().subarray(0, 9))}`;
}

export function demoKeySecret(appSecret: string, organizationSlug: string): string {
  return `das_${base62(createHmac("sha256", appSecret).update(`demo-key:${organizationSlug}`).digest())}`;
}

export const DEMO_ORGANIZATIONS = [
  {
    slug: "acme-robotics",
    name: "Acme Robotics",
    licences: [
      ["kitchen-pick-place", "1.0.0"],
      ["kitchen-pick-place", "1.1.0"],
      ["warehouse-bin-picking", "1.2.0"],
    ],
  },
  {
    slug: "globex-ai",
    name: "Globex AI",
    licences: [
      ["kitchen-pick-place", "2.0.0"],
      ["tabletop-assembly", "0.9.0"],
      ["tabletop-assembly", "1.0.0"],
    ],
  },
] as const;

export const DEMO_USERS = [
  { email: "admin@das.example", role: "admin", organization: null, name: "Ada Admin" },
  { email: "reviewer@das.example", role: "reviewer", organization: null, name: "Rita Reviewer" },
  { email: "alice@acme.example", role: "licensee", organization: "acme-robotics", name: "Alice Licensee" },
  { email: "bob@globex.example", role: "licensee", organization: "globex-ai", name: "Bob Licensee" },
] as const;

export type DemoAccounts = {
  keys: { organization: string; secret: string }[];
  users: { email: string; role: string; password: string }[];
};

/** Every demo key and portal password of an installation, as the launcher and the seed print them. */
export function demoAccounts(appSecret: string): DemoAccounts {
  return {
    keys: DEMO_ORGANIZATIONS.map((o) => ({ organization: o.slug, secret: demoKeySecret(appSecret, o.slug) })),
    users: DEMO_USERS.map((u) => ({ email: u.email, role: u.role, password: demoPassword(appSecret, u.email) })),
  };
}
