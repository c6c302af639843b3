/** @module Lambda of the Offsets service (Offsets and consumer progress); its endpoints are those of lib/protocol with service "Offsets". */
import { serviceHandler } from "./shared/api-handler.js";

export const handler = serviceHandler("Offsets");
