/**
 * @module The tokenizer of SQL92 filter expressions, the lexical rules of RocketMQ's `SelectorParser.jj`
 * (apache/rocketmq `filter/`): keywords and names are ASCII and case-insensitive for keywords only, string
 * literals in single quotes with `''` for a quote, integer literals (`0` or no leading zero, an optional `L`),
 * decimal literals (`1.5`, `5.`, `.5`, `5E10`), `--` line and `/* *\/` block comments. One loop over the
 * text, no recursion and no regular expression over the whole input.
 */

export type Sql92TokenKind = "keyword" | "name" | "string" | "integer" | "decimal" | "symbol" | "end";

export interface Sql92Token {
  kind: Sql92TokenKind;
  /** The keyword in upper case, the name as written, the decoded string, the literal's digits, the symbol. */
  text: string;
  /** Index of the token's first character in the expression (0-based). */
  position: number;
}

/** RocketMQ's reserved words; a name that spells one (in any case) is that keyword, never a property. */
export const SQL92_KEYWORDS: ReadonlySet<string> = new Set([
  "NOT",
  "AND",
  "OR",
  "BETWEEN",
  "IN",
  "TRUE",
  "FALSE",
  "NULL",
  "IS",
  "CONTAINS",
  "STARTSWITH",
  "ENDSWITH",
]);

/** The operators and punctuation of the grammar, longest first so that `<=` wins over `<`. */
const SYMBOLS = ["<>", "<=", ">=", "=", "<", ">", "(", ")", ",", "+", "-"] as const;

/** Thrown by the tokenizer and the parser; `compileFilter` turns it into a bounded `PARAMETER_ILLEGAL`. */
export class Sql92SyntaxError extends Error {
  readonly position: number;
  constructor(message: string, position: number) {
    super(message);
    this.position = position;
  }
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isNameStart = (c: number): boolean =>
  (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c === 0x24;
const isNamePart = (c: number): boolean => isNameStart(c) || isDigit(c);
/** SelectorParser's white space: space, tab, newline, carriage return, form feed. */
const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x0c;

/** Splits `text` into tokens, ending with one `end` token. Throws `Sql92SyntaxError` on a character it cannot read. */
export function tokenizeSql92(text: string): Sql92Token[] {
  const tokens: Sql92Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (isSpace(c)) {
      i++;
    } else if (text.startsWith("--", i)) {
      while (i < text.length && text[i] !== "\n" && text[i] !== "\r") i++;
    } else if (text.startsWith("/*", i)) {
      const close = text.indexOf("*/", i + 2);
      if (close < 0) throw new Sql92SyntaxError("unterminated comment", i);
      i = close + 2;
    } else if (c === 0x27) {
      i = readString(text, i, tokens);
    } else if (isDigit(c) || (c === 0x2e && isDigit(text.charCodeAt(i + 1)))) {
      i = readNumber(text, i, tokens);
    } else if (isNameStart(c)) {
      const start = i;
      while (i < text.length && isNamePart(text.charCodeAt(i))) i++;
      const word = text.slice(start, i);
      const upper = word.toUpperCase();
      tokens.push(
        SQL92_KEYWORDS.has(upper)
          ? { kind: "keyword", text: upper, position: start }
          : { kind: "name", text: word, position: start },
      );
    } else {
      const symbol = SYMBOLS.find((s) => text.startsWith(s, i));
      if (symbol === undefined) throw new Sql92SyntaxError(`unexpected character ${describeChar(c)}`, i);
      tokens.push({ kind: "symbol", text: symbol, position: i });
      i += symbol.length;
    }
  }
  tokens.push({ kind: "end", text: "", position: text.length });
  return tokens;
}

/** A string literal from the quote at `start`: `''` stands for one quote; it may span lines. */
function readString(text: string, start: number, tokens: Sql92Token[]): number {
  let value = "";
  let i = start + 1;
  for (;;) {
    const close = text.indexOf("'", i);
    if (close < 0) throw new Sql92SyntaxError("unterminated string literal", start);
    value += text.slice(i, close);
    if (text[close + 1] !== "'") {
      tokens.push({ kind: "string", text: value, position: start });
      return close + 1;
    }
    value += "'";
    i = close + 2;
  }
}

/**
 * A numeric literal at `start`, matched longest-first as JavaCC does: a decimal when it has a `.` or an
 * exponent, otherwise an integer (`0`, or digits without a leading zero, with an optional `L`).
 */
function readNumber(text: string, start: number, tokens: Sql92Token[]): number {
  let i = start;
  while (isDigit(text.charCodeAt(i))) i++;
  const intEnd = i;
  let decimal = false;
  if (text[i] === ".") {
    decimal = true;
    i++;
    while (isDigit(text.charCodeAt(i))) i++;
  }
  const exponentEnd = exponentAt(text, i);
  if (exponentEnd > i) {
    decimal = true;
    i = exponentEnd;
  }
  if (decimal) {
    tokens.push({ kind: "decimal", text: text.slice(start, i), position: start });
    return i;
  }
  // "0" stands alone: "012" is the literal 0 followed by 12, which the parser then refuses.
  const end = text[start] === "0" ? start + 1 : intEnd;
  tokens.push({ kind: "integer", text: text.slice(start, end), position: start });
  const suffix = text[end];
  return text[start] !== "0" && (suffix === "l" || suffix === "L") ? end + 1 : end;
}

/** The end of an exponent (`E`, an optional sign, digits) at `i`, or `i` when there is none. */
function exponentAt(text: string, i: number): number {
  if (text[i] !== "e" && text[i] !== "E") return i;
  let j = i + 1;
  if (text[j] === "+" || text[j] === "-") j++;
  if (!isDigit(text.charCodeAt(j))) return i;
  while (isDigit(text.charCodeAt(j))) j++;
  return j;
}

/** A character for an error message: printable ASCII as itself, anything else as its code point. */
function describeChar(c: number): string {
  return c > 0x20 && c < 0x7f ? `'${String.fromCharCode(c)}'` : `U+${c.toString(16).toUpperCase().padStart(4, "0")}`;
}
