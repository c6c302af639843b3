/**
 * @module HPACK (RFC 7541), as a gRPC server needs it: a decoder of the client's header blocks, with the
 * connection's dynamic table, and an encoder of the server's own few headers as literals that never touch the
 * client's table (so nothing of the encoder's state needs keeping). A malformed block is a `CompressionError`,
 * which the connection answers with GOAWAY COMPRESSION_ERROR: after it the two tables disagree for good.
 */
import { HUFFMAN_CODES, HUFFMAN_LENGTHS, STATIC_TABLE } from "./hpack-tables.js";

export class CompressionError extends Error {
  override readonly name = "CompressionError";
}

/** The Huffman code as a binary trie: node n's children at [2n] (bit 0) and [2n + 1]; a leaf is -(symbol + 1). */
const HUFFMAN_TRIE: Int32Array = (() => {
  const trie: number[] = [0, 0];
  let nodes = 1;
  for (let symbol = 0; symbol < 256; symbol++) {
    const code = HUFFMAN_CODES[symbol] ?? 0;
    const length = HUFFMAN_LENGTHS[symbol] ?? 0;
    let node = 0;
    for (let bit = length - 1; bit >= 0; bit--) {
      const slot = node * 2 + ((code >>> bit) & 1);
      if (bit === 0) {
        trie[slot] = -(symbol + 1);
      } else {
        if (trie[slot] === 0) {
          trie[slot] = nodes++;
          trie.push(0, 0);
        }
        node = trie[slot] ?? 0;
      }
    }
  }
  return Int32Array.from(trie);
})();

/** Decodes a Huffman-coded string; the padding must be at most 7 one-bits (the EOS code's prefix). */
export function decodeHuffman(bytes: Buffer, start: number, end: number): string {
  const out = Buffer.allocUnsafe((end - start) * 2);
  let written = 0;
  let node = 0;
  let bitsSinceSymbol = 0;
  let onesSinceSymbol = true;
  for (let i = start; i < end; i++) {
    const byte = bytes[i] ?? 0;
    for (let bit = 7; bit >= 0; bit--) {
      const one = (byte >> bit) & 1;
      const next = HUFFMAN_TRIE[node * 2 + one] ?? 0;
      if (next < 0) {
        out[written++] = -next - 1;
        node = 0;
        bitsSinceSymbol = 0;
        onesSinceSymbol = true;
      } else if (next === 0) {
        throw new CompressionError("a Huffman string holds the end-of-string code");
      } else {
        node = next;
        bitsSinceSymbol++;
        if (one === 0) onesSinceSymbol = false;
      }
    }
  }
  if (bitsSinceSymbol > 7 || !onesSinceSymbol) throw new CompressionError("a Huffman string's padding is not EOS");
  return out.toString("latin1", 0, written);
}

/** What an entry costs in the dynamic table (RFC 7541 §4.1). */
const entrySize = (name: string, value: string) => name.length + value.length + 32;

export class HpackDecoder {
  /** The dynamic table, oldest first (index 62 is the newest: the last element). */
  readonly #entries: [string, string][] = [];
  #size = 0;
  #maxSize: number;

  /** `limit`: the table size this server allows (its SETTINGS_HEADER_TABLE_SIZE). */
  constructor(private readonly limit = 4096) {
    this.#maxSize = limit;
  }

  /** Bytes the dynamic table holds (RFC 7541 sizes). */
  get tableSize(): number {
    return this.#size;
  }

  /** Calls `onHeader` for each header of one complete header block, in order. */
  decode(block: Buffer, onHeader: (name: string, value: string) => void): void {
    let at = 0;
    const end = block.length;
    const integer = (prefixBits: number): number => {
      if (at >= end) throw new CompressionError("a header block ends inside an integer");
      const mask = (1 << prefixBits) - 1;
      let value = (block[at++] ?? 0) & mask;
      if (value < mask) return value;
      let shift = 0;
      for (;;) {
        if (at >= end) throw new CompressionError("a header block ends inside an integer");
        const byte = block[at++] ?? 0;
        value += (byte & 127) * 2 ** shift;
        shift += 7;
        if ((byte & 128) === 0) return value;
        if (shift > 28) throw new CompressionError("an integer in a header block is too large");
      }
    };
    const string = (): string => {
      const huffman = ((block[at] ?? 0) & 0x80) !== 0;
      const length = integer(7);
      if (length > end - at) throw new CompressionError("a header block ends inside a string");
      const text = huffman ? decodeHuffman(block, at, at + length) : block.toString("latin1", at, at + length);
      at += length;
      return text;
    };
    let sizeUpdateAllowed = true;
    while (at < end) {
      const first = block[at] ?? 0;
      if (first & 0x80) {
        const [name, value] = this.#entry(integer(7));
        onHeader(name, value);
      } else if (first & 0x40) {
        const index = integer(6);
        const name = index === 0 ? string() : this.#entry(index)[0];
        const value = string();
        this.#add(name, value);
        onHeader(name, value);
      } else if (first & 0x20) {
        if (!sizeUpdateAllowed) throw new CompressionError("a table size update after the first header");
        const size = integer(5);
        if (size > this.limit) throw new CompressionError(`a table size of ${size} is over ${this.limit}`);
        this.#maxSize = size;
        this.#evictTo(size);
        continue;
      } else {
        // Literal without indexing (0000) or never indexed (0001): not added to the table.
        const index = integer(4);
        const name = index === 0 ? string() : this.#entry(index)[0];
        onHeader(name, string());
      }
      sizeUpdateAllowed = false;
    }
  }

  #entry(index: number): readonly [string, string] {
    if (index === 0) throw new CompressionError("header index 0");
    if (index <= STATIC_TABLE.length) return STATIC_TABLE[index - 1] as readonly [string, string];
    const entry = this.#entries[this.#entries.length - 1 - (index - STATIC_TABLE.length - 1)];
    if (entry === undefined) throw new CompressionError(`header index ${index} is past the dynamic table`);
    return entry;
  }

  #add(name: string, value: string): void {
    const size = entrySize(name, value);
    if (size > this.#maxSize) {
      // An entry larger than the table empties it and is not added (RFC 7541 §4.4).
      this.#entries.length = 0;
      this.#size = 0;
      return;
    }
    this.#evictTo(this.#maxSize - size);
    this.#entries.push([name, value]);
    this.#size += size;
  }

  #evictTo(size: number): void {
    let drop = 0;
    while (this.#size > size && drop < this.#entries.length) {
      const [name, value] = this.#entries[drop] as [string, string];
      this.#size -= entrySize(name, value);
      drop++;
    }
    if (drop > 0) this.#entries.splice(0, drop);
  }
}

/** An integer with an N-bit prefix (RFC 7541 §5.1), `flags` in the prefix byte's high bits. */
function pushInteger(out: number[], value: number, prefixBits: number, flags: number): void {
  const mask = (1 << prefixBits) - 1;
  if (value < mask) {
    out.push(flags | value);
    return;
  }
  out.push(flags | mask);
  let rest = value - mask;
  while (rest >= 128) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
}

/**
 * A header block of `headers` as literals without indexing (new names, raw strings): the client's dynamic
 * table is never touched. Names and values must be ASCII (the callers' are: gRPC's own and percent-encoded).
 */
export function encodeLiteralHeaders(headers: readonly (readonly [string, string])[]): Buffer {
  const out: number[] = [];
  for (const [name, value] of headers) {
    out.push(0);
    pushInteger(out, name.length, 7, 0);
    for (let i = 0; i < name.length; i++) out.push(name.charCodeAt(i) & 0xff);
    pushInteger(out, value.length, 7, 0);
    for (let i = 0; i < value.length; i++) out.push(value.charCodeAt(i) & 0xff);
  }
  return Buffer.from(out);
}

/** `:status: 200` from the static table (index 8), then the given literals. */
export function encodeResponseHeaders(headers: readonly (readonly [string, string])[]): Buffer {
  return Buffer.concat([Buffer.from([0x88]), encodeLiteralHeaders(headers)]);
}
