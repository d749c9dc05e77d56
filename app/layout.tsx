import type { Metadata, Viewport } from "next";
import { connection } from "next/server";
import type { ReactNode } from "react";
import { Providers } from "@/components/providers";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Dataset Access Service", template: "%s · Dataset Access Service" },
  description: "Licensed robotics datasets: browse, filter, download, audit.",
};

export const viewport: Viewport = { width: "device-width", initialScale: 1 };

export default async function RootLayout({ children }: { children: ReactNode }) {
  // Every page is rendered per request, so Next can put that response's CSP nonce (proxy.ts) on its
  // scripts; a page prerendered at build time (the 404 for unknown paths) would carry none and not hydrate.
  await connection();
  return (
    <html lang="en">
      <body className="min-h-screen font-sans">
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
