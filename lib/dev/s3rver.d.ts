// The parts of @20minutes/s3rver (which ships no types) that the local store uses.
declare module "@20minutes/s3rver" {
  import type { AddressInfo } from "node:net";

  /** Its files: a bucket is a directory; a bucket's configuration, a file it names. */
  export type FilesystemStore = {
    putBucket(bucket: string): Promise<unknown>;
    getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  };

  export default class S3rver {
    constructor(options: {
      address?: string;
      port?: number;
      directory?: string;
      silent?: boolean;
      vhostBuckets?: boolean;
    });
    store: FilesystemStore;
    /** Koa's middleware list, composed when the server starts. */
    middleware: ((ctx: any, next: () => Promise<void>) => Promise<void>)[];
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
  }
}

// Its account registry: the key pairs whose signatures it accepts.
declare module "@20minutes/s3rver/lib/models/account.js" {
  export default class AWSAccount {
    static DUMMY_ACCOUNT: AWSAccount;
    createKeyPair(accessKeyId: string, secretAccessKey: string): void;
    revokeAccessKey(accessKeyId: string): void;
  }
}
