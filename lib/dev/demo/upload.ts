import type { S3Client } from "@aws-sdk/client-s3";
import { objectExists, putObject } from "../../storage/client";
import { objectKey } from "../../storage/config";
import { demoFileBytes, type GeneratedVersion } from "./generate";

const PARALLEL = 16;

/** Puts a demo version's files in the store (unless they are there already), so demo downloads really download. */
export async function uploadDemoFiles(client: S3Client, bucket: string, version: GeneratedVersion): Promise<number> {
  const keyOf = (path: string) => objectKey(version.datasetId, version.version, path);
  const [first, last] = [version.files[0], version.files.at(-1)];
  if (
    !first ||
    ((await objectExists(client, bucket, keyOf(first.path))) && (await objectExists(client, bucket, keyOf(last!.path))))
  )
    return 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < version.files.length) {
        const file = version.files[next++]!;
        // The store serves what it was given: the player's video needs its type.
        const type = file.path.endsWith(".mp4") ? "video/mp4" : undefined;
        await putObject(
          client,
          bucket,
          keyOf(file.path),
          demoFileBytes(version.spec, file.path, file.stream, file.seconds),
          type,
        );
      }
    }),
  );
  return version.files.length;
}
