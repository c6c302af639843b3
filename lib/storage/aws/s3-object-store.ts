/**
 * @module `ObjectStore` on S3: one bucket, keys as given. Keys and ranges are checked before anything
 * is sent, and every request sent is counted (S3 bills failed requests too).
 */
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  PutObjectCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { ErrorCode, NimbusError } from "../../core/errors.js";
import type { ByteRange, ListOptions, ListPage, ObjectStore } from "../object-store.js";
import type { RequestCounter } from "../request-counter.js";
import { checkByteRange, checkList, checkObjectKey } from "../validate.js";
import { translateError } from "./sdk-errors.js";

/** The most keys one DeleteObjects request takes. */
const S3_MAX_KEYS = 1000;

export class S3ObjectStore implements ObjectStore {
  readonly counter: RequestCounter;
  /**
   * S3's tail latency is per request: a slow PUT's twin most likely takes another path (hedged-puts.ts). Off for
   * a store that may rewrite an object in place (`AwsStorageOptions.hedgeObjectPuts`).
   */
  readonly hedgePuts: boolean;
  readonly #client: S3Client;
  readonly #bucket: string;

  constructor(client: S3Client, bucket: string, counter: RequestCounter, hedgePuts = true) {
    this.hedgePuts = hedgePuts;
    this.#client = client;
    this.#bucket = bucket;
    this.counter = counter;
  }

  async put(key: string, body: Uint8Array): Promise<void> {
    checkObjectKey(key);
    this.counter.objectPut();
    try {
      await this.#client.send(new PutObjectCommand({ Bucket: this.#bucket, Key: key, Body: body }));
    } catch (err) {
      throw translateError(err, this.#what("PutObject", key));
    }
  }

  async get(key: string, range?: ByteRange): Promise<Uint8Array> {
    checkObjectKey(key);
    checkByteRange(range);
    this.counter.objectGet();
    const what = this.#what("GetObject", key);
    let out: GetObjectCommandOutput;
    try {
      out = await this.#client.send(
        new GetObjectCommand({
          Bucket: this.#bucket,
          Key: key,
          ...(range === undefined ? {} : { Range: `bytes=${range.offset}-${range.offset + range.length - 1}` }),
        }),
      );
    } catch (err) {
      throw translateError(err, what);
    }
    const body = out.Body;
    // S3 answers 416 for a range that starts at or past the end; a server that instead sends a 206 for an
    // empty object ("bytes 0-0/0", as s3rver does) gets the same answer, without reading a body it lacks.
    const total = totalOf(out.ContentRange);
    if (range !== undefined && total !== undefined && range.offset >= total) {
      discard(body);
      throw new NimbusError(
        ErrorCode.INVALID_RANGE,
        `${what}: range starts at ${range.offset}, object has ${total} bytes`,
      );
    }
    if (body === undefined) return new Uint8Array(0);
    let bytes: Uint8Array;
    try {
      bytes = await body.transformToByteArray();
    } catch (err) {
      throw translateError(err, what);
    }
    // Never more than asked for, even from a server that ignores part of the range (s3rver answers
    // `bytes=0-0` with the whole object).
    const got = range !== undefined && bytes.byteLength > range.length ? bytes.slice(0, range.length) : bytes;
    this.counter.objectBytes(got.byteLength);
    return got;
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const limit = checkList(prefix, options);
    this.counter.objectList();
    let out: ListObjectsV2CommandOutput;
    try {
      out = await this.#client.send(
        new ListObjectsV2Command({
          Bucket: this.#bucket,
          Prefix: prefix,
          MaxKeys: limit,
          ...(options.continuation === undefined ? {} : { ContinuationToken: options.continuation }),
        }),
      );
    } catch (err) {
      throw translateError(err, this.#what("ListObjectsV2", prefix));
    }
    const objects = (out.Contents ?? []).map((o) => ({ key: o.Key ?? "", size: o.Size ?? 0 }));
    const next = out.IsTruncated === true ? out.NextContinuationToken : undefined;
    return next === undefined ? { objects } : { objects, next };
  }

  async delete(keys: string[]): Promise<void> {
    for (const key of keys) checkObjectKey(key);
    for (let i = 0; i < keys.length; i += S3_MAX_KEYS) {
      const chunk = keys.slice(i, i + S3_MAX_KEYS);
      this.counter.objectDelete();
      const what = this.#what("DeleteObjects", `${chunk[0]}… (${chunk.length} keys)`);
      let errors: { Key?: string | undefined; Code?: string | undefined; Message?: string | undefined }[] | undefined;
      try {
        const out = await this.#client.send(
          new DeleteObjectsCommand({
            Bucket: this.#bucket,
            Delete: { Objects: chunk.map((Key) => ({ Key })), Quiet: true },
          }),
        );
        errors = out.Errors;
      } catch (err) {
        throw translateError(err, what);
      }
      // DeleteObjects answers 200 and lists per-key failures (a missing key is not one of them).
      const failed = errors?.[0];
      if (failed !== undefined) {
        const cause = Object.assign(new Error(failed.Message ?? "delete failed"), { name: failed.Code ?? "Error" });
        throw translateError(cause, `${what}: "${failed.Key}"`);
      }
    }
  }

  #what(op: string, key: string): string {
    return `${op} "${key}" in bucket "${this.#bucket}"`;
  }
}

/** The object's size from a `Content-Range: bytes a-b/total` header. */
function totalOf(contentRange: string | undefined): number | undefined {
  const match = contentRange === undefined ? null : /\/(\d+)$/.exec(contentRange);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/** Drops an unread body, so its connection is freed instead of waiting for bytes that never come. */
function discard(body: unknown): void {
  const stream = body as { destroy?: unknown } | undefined;
  if (typeof stream?.destroy === "function") stream.destroy();
}
