/**
 * @module A listening port that is taken, said as such: which door (HTTP, gRPC) wanted which port, so the command
 * line can name the option that changes it. Node answers a taken port with `EADDRINUSE` (each door listens with
 * Node's own servers).
 */
export type Door = "HTTP" | "gRPC" | "remoting";

export class PortInUseError extends Error {
  constructor(
    readonly door: Door,
    readonly host: string,
    readonly port: number,
    options?: { cause?: unknown },
  ) {
    super(`${door} port ${host}:${port} is already in use`, options);
    this.name = "PortInUseError";
  }
}

/** `err` as a PortInUseError when it says the address is taken; else `err` itself. */
export function asPortInUse(err: unknown, door: Door, host: string, port: number): unknown {
  const text = err instanceof Error ? `${(err as { code?: unknown }).code ?? ""} ${err.message}` : String(err);
  return /EADDRINUSE|address already in use/.test(text) ? new PortInUseError(door, host, port, { cause: err }) : err;
}
