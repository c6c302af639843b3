import assert from "node:assert/strict";
import type { NetworkInterfaceInfo } from "node:os";
import { describe, it } from "node:test";
import { buildMQClientId, DEFAULT_INSTANCE_NAME, localIPv4, resolveInstanceName } from "../../lib/client/client-id.js";

function v4(address: string, internal = false): NetworkInterfaceInfo {
  return {
    address,
    netmask: "255.255.255.0",
    family: "IPv4",
    mac: "00:00:00:00:00:00",
    internal,
    cidr: `${address}/24`,
  };
}

function v6(address: string, internal = false): NetworkInterfaceInfo {
  return {
    address,
    netmask: "ffff:ffff:ffff:ffff::",
    family: "IPv6",
    mac: "00:00:00:00:00:00",
    internal,
    cidr: `${address}/64`,
    scopeid: 0,
  };
}

describe("buildMQClientId", () => {
  it("joins ip and instance name with @", () => {
    assert.equal(buildMQClientId({ clientIP: "10.0.0.7", instanceName: "4242#8812345" }), "10.0.0.7@4242#8812345");
  });

  it("appends a unit name unless it is blank", () => {
    assert.equal(buildMQClientId({ clientIP: "10.0.0.7", instanceName: "i", unitName: "unit-a" }), "10.0.0.7@i@unit-a");
    for (const unitName of [undefined, "", "  "]) {
      assert.equal(buildMQClientId({ clientIP: "10.0.0.7", instanceName: "i", unitName }), "10.0.0.7@i");
    }
  });
});

describe("resolveInstanceName", () => {
  it("turns DEFAULT into pid#nanoTime for producers and clustering consumers", () => {
    const context = { pid: 1, nanoTime: 123456789012345n };
    assert.equal(resolveInstanceName(DEFAULT_INSTANCE_NAME, { role: "producer", ...context }), "1#123456789012345");
    assert.equal(resolveInstanceName("DEFAULT", { role: "consumer", ...context }), "1#123456789012345");
    assert.equal(
      resolveInstanceName("DEFAULT", { role: "consumer", messageModel: "CLUSTERING", pid: 7, nanoTime: 42 }),
      "7#42",
    );
  });

  it("keeps DEFAULT for broadcasting consumers", () => {
    assert.equal(
      resolveInstanceName("DEFAULT", { role: "consumer", messageModel: "BROADCASTING", pid: 1, nanoTime: 5n }),
      "DEFAULT",
    );
  });

  it("keeps a name the user chose", () => {
    assert.equal(resolveInstanceName("orders-1", { role: "producer", pid: 1, nanoTime: 5n }), "orders-1");
    assert.equal(resolveInstanceName("default", { role: "producer", pid: 1, nanoTime: 5n }), "default");
  });

  it("tells apart two containers with the same ip and pid 1", () => {
    const a = buildMQClientId({
      clientIP: "172.17.0.2",
      instanceName: resolveInstanceName("DEFAULT", { role: "consumer", pid: 1 }),
    });
    const b = buildMQClientId({
      clientIP: "172.17.0.2",
      instanceName: resolveInstanceName("DEFAULT", { role: "consumer", pid: 1 }),
    });
    assert.notEqual(a, b);
    assert.match(a, /^172\.17\.0\.2@1#\d+$/);
  });

  it("uses this process' pid when none is given", () => {
    assert.match(resolveInstanceName("DEFAULT", { role: "producer" }), new RegExp(`^${process.pid}#\\d+$`));
  });
});

describe("localIPv4", () => {
  it("picks the first non-internal IPv4 address outside 127.0 and 192.168", () => {
    const interfaces = {
      lo: [v4("127.0.0.1", true), v6("::1", true)],
      wlan0: [v4("192.168.1.20"), v6("fe80::1")],
      eth0: [v4("10.0.3.15")],
      eth1: [v4("172.31.9.9")],
    };
    assert.equal(localIPv4(interfaces), "10.0.3.15");
  });

  it("falls back to the last non-internal IPv4 address, then to 127.0.0.1", () => {
    assert.equal(localIPv4({ a: [v4("192.168.1.20")], b: [v4("192.168.7.7")] }), "192.168.7.7");
    assert.equal(localIPv4({ lo: [v4("127.0.0.1", true)], eth0: [v6("2001:db8::1")] }), "127.0.0.1");
    assert.equal(localIPv4({}), "127.0.0.1");
    assert.equal(localIPv4({ eth0: undefined }), "127.0.0.1");
  });

  it("reads this host's interfaces by default", () => {
    assert.match(localIPv4(), /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/);
  });
});
