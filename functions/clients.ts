/** @module Lambda of the Clients service (Heartbeats, unregistering, a group's consumers); its endpoints are those of lib/protocol with service "Clients". */
import { serviceHandler } from "./shared/api-handler.js";

export const handler = serviceHandler("Clients");
