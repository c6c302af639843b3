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
export { PushChannelClient } from "./push-channel-client.js";
export { signatureParts, signRequest } from "./sigv4.js";
