/**
 * @module The CLI's printing helpers in process: mqadmin-style tables, message bodies on one line, and the
 * progress display on a terminal (a bar redrawn in place) and elsewhere (plain lines), on a fake clock.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { byteSize, intIn } from "../../lib/cli/common.js";
import { escapeControls, formatBody, formatFields, formatTable } from "../../lib/cli/output.js";
import { Progress, type ProgressStream } from "../../lib/cli/progress.js";
import { hasControlCharacter } from "../../lib/core/control-characters.js";

function fakeStream(isTTY: boolean): ProgressStream & { text: string } {
  return {
    isTTY,
    columns: 80,
    text: "",
    write(s: string) {
      this.text += s;
    },
  };
}

describe("CLI output", () => {
  it("formats a table with # headers, left-aligned text and right-aligned numbers", () => {
    const text = formatTable(
      [{ header: "Broker Name" }, { header: "QID" }, { header: "Max Offset" }],
      [
        ["broker-a", 0, 12],
        ["broker-b", 10, 3],
      ],
    );
    assert.equal(
      text,
      [
        "#Broker Name  #QID  #Max Offset",
        "broker-a         0           12",
        "broker-b        10            3",
        "",
      ].join("\n"),
    );
    assert.equal(formatTable([{ header: "Topic" }], []), "#Topic\n");
  });

  it("formats fields with aligned values", () => {
    assert.equal(
      formatFields([
        ["Topic", "T"],
        ["Queue Offset", 3],
      ]),
      "Topic:         T\nQueue Offset:  3\n",
    );
  });

  it("shows bodies as text, quoted text when they have newlines, base64 when they are not UTF-8", () => {
    const enc = new TextEncoder();
    assert.equal(formatBody(enc.encode("Hello")), "Hello");
    assert.equal(formatBody(enc.encode("a\nb")), '"a\\nb"');
    assert.equal(formatBody(new Uint8Array([0xff, 0x00])), "base64:/wA=");
    assert.equal(formatBody(enc.encode("x".repeat(10)), 4), "xxxx...");
  });

  it("parses integers in a range and byte sizes", () => {
    assert.equal(intIn(1, 1024)("8"), 8);
    for (const bad of ["0", "1025", "1.5", "", "x"]) assert.throws(() => intIn(1, 1024)(bad), /integer from 1 to 1024/);
    assert.equal(byteSize("128"), 128);
    assert.equal(byteSize("4k"), 4096);
    assert.equal(byteSize("1MiB"), 1024 * 1024);
    assert.throws(() => byteSize("0"), /size/);
  });
});

describe("Progress", () => {
  it("on a terminal redraws one bar in place with percent, count, rate and time left, and clears it", () => {
    let now = 0;
    const stream = fakeStream(true);
    const progress = new Progress({ verb: "sent", total: 1000, stream, now: () => now });
    progress.add(100); // too soon after the start: nothing drawn
    assert.equal(stream.text, "");
    now = 1000;
    progress.add(150);
    assert.equal(stream.text, `\r\x1b[2K[${"#".repeat(10)}${"-".repeat(30)}]  25%  250/1000  250 msg/s  ETA 3s`);
    now = 1050;
    progress.add(10); // within the redraw interval
    assert.equal(stream.text.split("\r").length, 2);
    progress.finish();
    assert.ok(stream.text.endsWith("\r\x1b[2K"));
    assert.equal(progress.count, 260);
  });

  it("elsewhere writes a plain line per interval, and without a total shows the count and rate", () => {
    let now = 0;
    const stream = fakeStream(false);
    const progress = new Progress({ verb: "consumed", stream, now: () => now });
    for (let t = 1; t <= 3; t++) {
      now = t * 500;
      progress.add(50);
    }
    assert.equal(stream.text, "consumed 100, 100 msg/s\n");
    progress.finish();
    assert.equal(stream.text, "consumed 100, 100 msg/s\n", "no terminal codes");
  });
});

describe("terminal escape injection: the CLI escapes every control character it prints", () => {
  const hostile = "a\u001b[31mred\u0007\u009b2J\u202eevil\rb";

  it("escapes C0, DEL, C1 and bidi controls, keeping newlines and tabs only in whole outputs", () => {
    assert.equal(escapeControls(hostile, true), "a\\x1b[31mred\\x07\\x9b2J\\u202eevil\\x0db");
    assert.equal(escapeControls("x\ny\tz\u007f", true), "x\ny\tz\\x7f");
    assert.equal(escapeControls("x\ny\tz", false), "x\\x0ay\\x09z");
    assert.equal(escapeControls("plain text é 漢", true), "plain text é 漢");
  });

  it("escapes them in table cells, fields and bodies", () => {
    const table = formatTable([{ header: "Tag" }, { header: "Key" }], [[hostile, "k\u001b]0;t\u0007"]]);
    assert.equal(hasControlCharacter(table.replaceAll("\n", "")), false);
    assert.match(table, /a\\x1b\[31mred/);
    const fields = formatFields([["Tags", hostile]]);
    assert.equal(hasControlCharacter(fields.replaceAll("\n", "")), false);
    const body = formatBody(new TextEncoder().encode("x\u001b[2J\u009by"));
    assert.equal(hasControlCharacter(body), false);
  });
});
