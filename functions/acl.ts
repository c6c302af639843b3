/** @module Lambda of the Acl service (users and ACLs); its endpoints are those of lib/protocol with service "Acl". */
import { serviceHandler } from "./shared/api-handler.js";

export const handler = serviceHandler("Acl");
