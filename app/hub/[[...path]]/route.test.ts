import { beforeAll, describe, expect, it } from "vitest";
import { entriesOf, hubCall, hubCaller, plainRepo, sha256, type PlainRepo } from "@/lib/testing/hub-fixtures";

let caller: Awaited<ReturnType<typeof hubCaller>>;
let plain: PlainRepo;
beforeAll(async () => {
  caller = await hubCaller();
  plain = await plainRepo(caller.organizationId);
});

describe("smoke", () => {
  it("answers info, refs, tree, HEAD and GET", async () => {
    const base = `/hub/api/datasets/das/${plain.datasetId}`;
    const info = await hubCall(caller.key, base);
    console.log(info.status, info.text.slice(0, 600));
    const refs = await hubCall(caller.key, `${base}/refs`);
    console.log(refs.status, refs.text);
    const tree = await hubCall(caller.key, `${base}/tree/main?recursive=True`);
    console.log(tree.status, tree.text.slice(0, 600), tree.headers.get("link"));
    const file = plain.files[1]!;
    const head = await hubCall(caller.key, `/hub/datasets/das/${plain.datasetId}/resolve/main/${file.path}`, {
      method: "HEAD",
    });
    console.log(head.status, [...head.headers]);
    const get = await hubCall(caller.key, `/hub/datasets/das/${plain.datasetId}/resolve/main/${file.path}`);
    console.log(get.status, get.headers.get("location"));
    const bytes = Buffer.from(await (await fetch(get.headers.get("location")!)).arrayBuffer());
    expect(sha256(bytes)).toBe(file.sha256);
    console.log(await entriesOf(caller.keyId));
    const gated = await hubCall(caller.key, `${base}/revision/2.0.0`);
    console.log(
      gated.status,
      [...gated.headers].filter(([k]) => k.startsWith("x-error")),
    );
  });
});
