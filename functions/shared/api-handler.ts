/** @module One Lambda handler per service: the service's routes (lib/http/routes) on this container's AWS-wired broker. */
import type { ApiEvent, ApiResult } from "../../lib/http/api-types.js";
import { createApiHandler } from "../../lib/http/handler.js";
import { SERVICE_ROUTES } from "../../lib/http/routes/index.js";
import type { ServiceName } from "../../lib/protocol/index.js";
import { awsContext } from "./aws-context.js";

/** A Lambda handler that says which service it serves (test/infra checks it against infra/manifest.ts). */
export type ServiceHandler = ((event: ApiEvent) => Promise<ApiResult>) & { readonly service: ServiceName };

export function serviceHandler(service: ServiceName): ServiceHandler {
  return Object.assign(createApiHandler(SERVICE_ROUTES[service], awsContext), { service });
}
