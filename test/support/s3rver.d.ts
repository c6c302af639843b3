/** @module The slice of s3rver 3's API the tests use (the package ships no types). */
declare module "s3rver" {
  import type { Server } from "node:http";
  import type { AddressInfo } from "node:net";

  interface S3rverOptions {
    address?: string;
    port?: number;
    silent?: boolean;
    directory?: string;
    resetOnClose?: boolean;
    allowMismatchedSignatures?: boolean;
    vhostBuckets?: boolean;
    configureBuckets?: { name: string; configs?: (string | Uint8Array)[] }[];
  }

  /** What the store's listing gives the ListObjects controller. */
  interface S3rverListResult {
    objects: { key: string; size: number; lastModifiedDate: Date; metadata: Record<string, string | number> }[];
    commonPrefixes: string[];
    isTruncated: boolean;
  }

  interface S3rverListOptions {
    delimiter?: string;
    startAfter?: string;
    prefix?: string;
    maxKeys?: number;
  }

  /** s3rver's filesystem store (internal; pinned version). */
  interface S3rverStore {
    getBucketPath(bucket: string): string;
    getMetadata(bucket: string, key: string): Promise<Record<string, string | number>>;
    listObjects(bucket: string, options: S3rverListOptions): Promise<S3rverListResult>;
    deleteObject(bucket: string, key: string): Promise<void>;
  }

  export default class S3rver {
    constructor(options?: S3rverOptions);
    readonly store: S3rverStore;
    httpServer?: Server;
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
  }
}
