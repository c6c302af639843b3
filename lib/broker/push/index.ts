export { PushChannel, type PushGateway } from "./push-channel.js";
