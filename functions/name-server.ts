/** @module Lambda of the NameServer service (Name server: health, cluster, topic route, the OpenAPI document); its endpoints are those of lib/protocol with service "NameServer". */
import { serviceHandler } from "./shared/api-handler.js";

export const handler = serviceHandler("NameServer");
