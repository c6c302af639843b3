/**
 * @module RocketMQ's `ConsistentHashRouter`: a hash ring of physical nodes, each placed at several virtual
 * points, with its default `MD5Hash`. Consumers in different processes (and in Java) must place the same
 * nodes at the same points, so the hash and the tie rules follow RocketMQ's exactly.
 */
import { createHash } from "node:crypto";
import { ErrorCode, NimbusError } from "../../core/errors.js";

/** A hash of a string to an integer; RocketMQ's `HashFunction` (a Java `long`). */
export interface HashFunction {
  hash(key: string): number;
}

/** Anything with a stable key; RocketMQ's `Node`. */
export interface HashNode {
  getKey(): string;
}

/**
 * RocketMQ's default ring hash: MD5 of the key's UTF-8 bytes, the first 4 bytes of the digest read
 * big-endian as an unsigned 32-bit number (Java builds a `long` from them, so it is never negative).
 *
 * @example
 * new MD5Hash().hash(""); // 0xd41d8cd9, from MD5("") = d41d8cd98f00b204...
 */
export class MD5Hash implements HashFunction {
  hash(key: string): number {
    return createHash("md5").update(key, "utf8").digest().readUInt32BE(0);
  }
}

interface VirtualNode<T extends HashNode> {
  readonly physicalNode: T;
  readonly replicaIndex: number;
}

const virtualKey = (vNode: VirtualNode<HashNode>): string => `${vNode.physicalNode.getKey()}-${vNode.replicaIndex}`;

/**
 * A hash ring. Each physical node gets `vNodeCount` virtual points, hashed from `"<key>-<replica>"`; a key
 * routes to the first point at or after its hash, wrapping to the first point of the ring. When two
 * points hash alike, the later one replaces the earlier, as in Java's `TreeMap.put`.
 *
 * @example
 * const ring = new ConsistentHashRouter([{ getKey: () => "c1" }, { getKey: () => "c2" }], 10);
 * ring.routeNode("MessageQueue [topic=T, brokerName=broker-a, queueId=0]")?.getKey();
 */
export class ConsistentHashRouter<T extends HashNode> {
  private readonly ring = new Map<number, VirtualNode<T>>();
  /** The ring's points in ascending order; rebuilt on the next route after a change. */
  private sortedPoints: number[] | undefined;
  private readonly hashFunction: HashFunction;

  constructor(pNodes: Iterable<T> | null | undefined, vNodeCount: number, hashFunction: HashFunction = new MD5Hash()) {
    this.hashFunction = hashFunction;
    for (const pNode of pNodes ?? []) this.addNode(pNode, vNodeCount);
  }

  /** Adds `vNodeCount` more virtual points for `pNode`, numbered after the ones it already has. */
  addNode(pNode: T, vNodeCount: number): void {
    if (!Number.isInteger(vNodeCount) || vNodeCount < 0) {
      throw new NimbusError(ErrorCode.PARAMETER_ILLEGAL, `illegal virtual node counts :${vNodeCount}`);
    }
    const existingReplicas = this.getExistingReplicas(pNode);
    for (let i = 0; i < vNodeCount; i++) {
      const vNode: VirtualNode<T> = { physicalNode: pNode, replicaIndex: i + existingReplicas };
      this.ring.set(this.hashFunction.hash(virtualKey(vNode)), vNode);
    }
    this.sortedPoints = undefined;
  }

  /** Removes every virtual point of the node with `pNode`'s key. */
  removeNode(pNode: T): void {
    const key = pNode.getKey();
    for (const [point, vNode] of this.ring) {
      if (vNode.physicalNode.getKey() === key) this.ring.delete(point);
    }
    this.sortedPoints = undefined;
  }

  /** The node `objectKey` belongs to, or undefined on an empty ring. */
  routeNode(objectKey: string): T | undefined {
    if (this.ring.size === 0) return undefined;
    const points = this.points();
    const hash = this.hashFunction.hash(objectKey);
    // Lower bound: the first point >= hash (Java's tailMap(hash).firstKey()).
    let lo = 0;
    let hi = points.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (points[mid]! < hash) lo = mid + 1;
      else hi = mid;
    }
    const point = lo < points.length ? points[lo]! : points[0]!;
    return this.ring.get(point)?.physicalNode;
  }

  /** How many virtual points the node with `pNode`'s key holds. */
  getExistingReplicas(pNode: T): number {
    const key = pNode.getKey();
    let replicas = 0;
    for (const vNode of this.ring.values()) if (vNode.physicalNode.getKey() === key) replicas++;
    return replicas;
  }

  private points(): number[] {
    this.sortedPoints ??= [...this.ring.keys()].sort((a, b) => a - b);
    return this.sortedPoints;
  }
}
