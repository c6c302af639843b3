/** @module The remoting door: RocketMQ 4.x's TCP protocol over the broker (docs/remoting.md). */
export { RESPONSE_CODE, RequestCode, ResponseCode } from "./codes.js";
export { type ConnectionLimits, DEFAULT_CONNECTION_LIMITS } from "./connection.js";
export { RemotingDoor, type RemotingDoorOptions } from "./door.js";
export {
  decodeFrame,
  encodeFrame,
  FrameDecoder,
  FrameError,
  MAX_FRAME_BYTES,
  MAX_REQUEST_FRAME_BYTES,
  ONEWAY_FLAG,
  RESPONSE_FLAG,
  type RemotingCommand,
  SERIALIZE_JSON,
  SERIALIZE_ROCKETMQ,
} from "./frame.js";
export { MAX_PULL_ANSWER_BYTES } from "./pull.js";
export { MAX_UNDECIDED_CONNECTIONS, type Sniffing, type SniffOptions, sniffRemoting } from "./sniff.js";
export { decodeBatch, parseProperties, propertiesString } from "./wire-message.js";
