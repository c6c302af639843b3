/** @module Lambda of the Pull service (The consumer's POST /pull); its endpoints are those of lib/protocol with service "Pull". */
import { serviceHandler } from "./shared/api-handler.js";

export const handler = serviceHandler("Pull");
