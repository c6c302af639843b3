/**
 * @module Control characters: what a terminal acts on instead of showing (C0, DEL, C1; ESC and CSI start
 * escape sequences) and the bidi controls that reorder what it shows. The broker refuses them in tags and
 * keys; the CLI escapes them in everything it prints.
 */

/** C0 (0x00-0x1f), DEL and C1 (0x7f-0x9f), and the bidi embeddings, overrides and isolates. */
export function isControlCode(code: number): boolean {
  return (
    code <= 0x1f ||
    (code >= 0x7f && code <= 0x9f) ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

/** Whether `text` holds a control character. */
export function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (isControlCode(text.charCodeAt(i))) return true;
  return false;
}
