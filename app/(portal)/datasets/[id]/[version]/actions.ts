"use server";

import { DownloadBody } from "@/lib/api/requests";
import { parseBody } from "@/lib/http/body";
import { createDownload } from "@/lib/downloads/create-download";
import { runAction, type ActionResult } from "@/lib/http/portal";

/**
 * A download from the portal: the same verb as POST /v1/downloads, so it is disclosed the same
 * way, with channel "portal" and the signed-in user as recipient.
 */
export async function requestDownload(
  input: unknown,
): Promise<ActionResult<{ download_id: string; file_count: number }>> {
  return runAction("catalog", async (ctx) => {
    // A server action is a public endpoint: its input gets the same check as the API's body.
    const { download } = await createDownload(ctx, { body: parseBody(DownloadBody, input) });
    return { download_id: download.download_id, file_count: download.file_count };
  });
}
