/**
 * @module The HTTP shapes the handlers see: API Gateway HTTP API (payload v2) events and results. The
 * local server builds the same events, so one handler serves both.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";

export type ApiEvent = APIGatewayProxyEventV2;
export type ApiResult = APIGatewayProxyStructuredResultV2;
