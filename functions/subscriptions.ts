/** @module Lambda of the Subscriptions service (docs/subscriptions.md); its endpoints are those of lib/protocol with service "Subscriptions". */
import { serviceHandler } from "./shared/api-handler.js";

export const handler = serviceHandler("Subscriptions");
