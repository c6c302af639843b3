/** @module What a subscriber needs (docs/subscriptions.md): the typed event and answer of a subscriber function. */
export {
  type NimbusBatchResponse,
  type NimbusEvent,
  type NimbusHandler,
  type NimbusRecord,
  recordBody,
  recordBytes,
} from "./nimbus-event.js";
