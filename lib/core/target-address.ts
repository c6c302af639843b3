/**
 * @module Which network addresses a subscription's HTTPS target may reach (docs/security.md "Subscription
 * targets"). A deployment allows `public` addresses only (AWS stages: on Lambda, loopback is the runtime API), or
 * also `private` ones (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7), or also `loopback` (127/8, ::1:
 * `nimbus dev`'s default, for local webhooks). Link-local (169.254/16, fe80::/10: instance and task metadata
 * services), AWS's fd00:ec2::/32 (its IPv6 metadata, DNS and time services), unspecified, multicast and reserved
 * addresses are never reachable. Addresses are the parsed forms a URL or a DNS answer gives (`127.1` and
 * `2130706433` are `127.0.0.1` once a URL has parsed them; IPv4-mapped IPv6 addresses are judged as their IPv4
 * address).
 *
 * @example
 * addressProblem("127.0.0.1", "public"); // "127.0.0.1 is a loopback address ..."
 * addressProblem("93.184.216.34", "public"); // undefined
 */
import { isIP } from "node:net";

/** The widest kind of address a deployment lets targets reach. */
export const TARGET_NETWORKS = ["public", "private", "loopback"] as const;
export type TargetNetworks = (typeof TARGET_NETWORKS)[number];

type AddressKind = "public" | "private" | "loopback" | "never";

const RANK: Record<TargetNetworks, number> = { public: 0, private: 1, loopback: 2 };

/** Why `address` (an IP address) may not be reached under `networks`, or undefined when it may. */
export function addressProblem(address: string, networks: TargetNetworks): string | undefined {
  const kind = addressKind(address);
  if (kind === "public") return undefined;
  if (kind === "never") return `${address} is a link-local, metadata, unspecified, multicast or reserved address`;
  if (RANK[kind] <= RANK[networks]) return undefined;
  return `${address} is a ${kind} address, and this deployment lets targets reach ${networks} addresses only`;
}

/**
 * Why a target URL's host may not be reached under `networks`, when its URL says so: an address (checked as
 * `addressProblem`) or `localhost`; undefined for any other name (its addresses are checked when it is dialled).
 */
export function urlHostProblem(url: string, networks: TargetNetworks): string | undefined {
  // A fully qualified name's final dot (`localhost.`) names the same host.
  const host = new URL(url).hostname.toLowerCase().replace(/\.$/, "");
  if (host === "localhost" || host.endsWith(".localhost")) return addressProblem("127.0.0.1", networks);
  return isIP(host.replace(/^\[|\]$/g, "")) === 0 ? undefined : addressProblem(host, networks);
}

/** The kind of an IP address; anything that is not one is "never". */
export function addressKind(address: string): AddressKind {
  const bare = address.replace(/^\[|\]$/g, "");
  const version = isIP(bare);
  if (version === 4) return ipv4Kind(ipv4Octets(bare));
  if (version === 6) return ipv6Kind(bare.toLowerCase());
  return "never";
}

function ipv4Octets(address: string): number[] {
  return address.split(".").map(Number);
}

function ipv4Kind([a = 0, b = 0]: number[]): AddressKind {
  if (a === 127) return "loopback";
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127))
    return "private";
  // 0/8 (this network), 169.254/16 (link-local: metadata services), 224/4 (multicast), 240/4 (reserved, broadcast).
  if (a === 0 || (a === 169 && b === 254) || a >= 224) return "never";
  return "public";
}

function ipv6Kind(address: string): AddressKind {
  const groups = expandIpv6(address);
  if (groups === undefined) return "never";
  const [g0 = 0, g1 = 0, , , , g5 = 0, g6 = 0, g7 = 0] = groups;
  if (groups.every((g) => g === 0)) return "never"; // ::
  if (groups.slice(0, 7).every((g) => g === 0) && g7 === 1) return "loopback"; // ::1
  // ::ffff:a.b.c.d (IPv4-mapped), ::a.b.c.d (IPv4-compatible) and 64:ff9b::a.b.c.d (NAT64, translated to the IPv4
  // address): the IPv4 address decides.
  const embedsIpv4 =
    (groups.slice(0, 5).every((g) => g === 0) && (g5 === 0xffff || g5 === 0)) ||
    (g0 === 0x64 && g1 === 0xff9b && groups.slice(2, 6).every((g) => g === 0));
  if (embedsIpv4) return ipv4Kind([g6 >> 8, g6 & 0xff, g7 >> 8, g7 & 0xff]);
  if ((g0 & 0xffc0) === 0xfe80 || (g0 & 0xff00) === 0xff00) return "never"; // link-local, multicast
  // fd00:ec2::/32: AWS's IPv6 instance metadata (fd00:ec2::254), DNS and time services, inside unique local.
  if (g0 === 0xfd00 && g1 === 0x0ec2) return "never";
  if ((g0 & 0xfe00) === 0xfc00) return "private"; // unique local
  return "public";
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part folded in), or undefined. */
function expandIpv6(address: string): number[] | undefined {
  const zoneless = address.split("%")[0] ?? "";
  let text = zoneless;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a = 0, b = 0, c = 0, d = 0] = ipv4Octets(dotted[1] ?? "");
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? left.length !== 8 : missing < 0) return undefined;
  const groups = [...left, ...Array<string>(tail === undefined ? 0 : missing).fill("0"), ...right].map((g) =>
    Number.parseInt(g, 16),
  );
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}
