/** @module Lambda of the Send service (The producer's POST /send); its endpoints are those of lib/protocol with service "Send". */
import { serviceHandler } from "./shared/api-handler.js";

export const handler = serviceHandler("Send");
