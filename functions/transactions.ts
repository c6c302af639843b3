/** @module Lambda of the Transactions service (half messages, end, read); its endpoints are those of lib/protocol with service "Transactions". */
import { serviceHandler } from "./shared/api-handler.js";

export const handler = serviceHandler("Transactions");
