/** @module Lambda of the Topics service (Topic administration); its endpoints are those of lib/protocol with service "Topics". */
import { serviceHandler } from "./shared/api-handler.js";

export const handler = serviceHandler("Topics");
