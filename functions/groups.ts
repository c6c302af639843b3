/** @module Lambda of the Groups service (subscription groups, the group list, lag history); its endpoints are those of lib/protocol with service "Groups". */
import { serviceHandler } from "./shared/api-handler.js";

export const handler = serviceHandler("Groups");
