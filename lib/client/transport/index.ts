/** @module How the SDK reaches brokers: the typed API client, HTTP transport and signing, broker routing, the push channel. */
export * from "./api-client.js";
export {
  type Credentials,
  type CredentialsProvider,
  HttpTransport,
  type IamAuth,
  isUnreachable,
  type NimbusCredentials,
  type RequestOptions,
  type TransportOptions,
} from "./http-transport.js";
export * from "./protocol-types.js";
export { PushChannelClient } from "./push-channel-client.js";
export { signatureParts, signRequest } from "./sigv4.js";
