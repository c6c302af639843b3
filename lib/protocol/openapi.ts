/**
 * @module The OpenAPI 3.1 document of the API, generated from the endpoint definitions: zod emits the JSON
 * Schemas (of the wire form: bodies as base64 strings), named shapes become `components.schemas`. The
 * local server answers it at `GET /openapi.json`; `docs/openapi.json` is the committed copy
 * (`npm run generate`, checked current by `npm test`).
 */
import { z } from "zod";
import { ErrorCode } from "../core/errors.js";
import { BATCH_MEDIA_TYPE, BINARY_BODIES, BINARY_RESPONSES } from "./binary-batch.js";
import { MAX_REQUEST_BYTES } from "./bounds.js";
import { type AnyEndpoint, NO_BODY, NO_PARAMS, pathParamNames, routeKey } from "./endpoint.js";
import { HTTP_STATUS } from "./http-status.js";
import { ENDPOINTS } from "./index.js";
import { CHANNEL_FRAMES, CHANNEL_PATH } from "./push-channel.js";

type JsonSchema = Record<string, unknown>;
const COMPONENT = (id: string) => `#/components/schemas/${id}`;
/** Every endpoint may answer these: a throttled or contended store, or a fault. */
const ALWAYS: readonly ErrorCode[] = [ErrorCode.SYSTEM_BUSY, ErrorCode.SYSTEM_ERROR];

function strip(schema: JsonSchema): JsonSchema {
  const { $schema: _s, $id: _i, ...rest } = schema;
  return rest;
}

/**
 * A `$ref` for a named shape, else the schema itself. Zod puts the named shapes inside it under `$defs`;
 * they are `components.schemas` already, so the refs are pointed there and the `$defs` dropped.
 */
function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  const id = z.globalRegistry.get(schema)?.id;
  if (typeof id === "string") return { $ref: COMPONENT(id) };
  const { $defs: _defs, ...rest } = strip(
    z.toJSONSchema(schema, { io: "input", target: "draft-2020-12" }) as JsonSchema,
  );
  return JSON.parse(JSON.stringify(rest).replaceAll('"#/$defs/', '"#/components/schemas/')) as JsonSchema;
}

/** The `components.schemas` of every named shape. */
function components(): Record<string, JsonSchema> {
  const all = z.toJSONSchema(z.globalRegistry, { io: "input", target: "draft-2020-12", uri: COMPONENT });
  return Object.fromEntries(
    Object.entries(all.schemas)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([id, s]) => [id, strip(s as JsonSchema)]),
  );
}

function parameters(e: AnyEndpoint): JsonSchema[] {
  const out: JsonSchema[] = [];
  const objectProps = (s: z.ZodType) => (s instanceof z.ZodObject ? (s.shape as Record<string, z.ZodType>) : {});
  const pathProps = objectProps(e.params);
  for (const name of pathParamNames(e.path)) {
    const prop = pathProps[name];
    out.push({ name, in: "path", required: true, schema: prop ? jsonSchemaOf(prop) : { type: "string" } });
  }
  if (e.query !== NO_PARAMS) {
    for (const [name, prop] of Object.entries(objectProps(e.query))) {
      out.push({ name, in: "query", required: !prop.safeParse(undefined).success, schema: jsonSchemaOf(prop) });
    }
  }
  return out;
}

/** A binary batch frame's media type entry (lib/protocol/binary-batch.ts, docs/api.md "Binary batches"). */
function binaryBatch(what: string): JsonSchema {
  return {
    schema: {
      type: "string",
      contentMediaType: BATCH_MEDIA_TYPE,
      // A request's or an answer's bytes: both within Lambda's 6 MB payload.
      maxLength: MAX_REQUEST_BYTES,
      description: `The ${what} as a binary batch frame: "NMBF", version 1, u32 header length, JSON header, batch codec bytes (docs/api.md, "Binary batches")`,
    },
  };
}

function operation(e: AnyEndpoint): JsonSchema {
  const errorRef = { $ref: COMPONENT("Error") };
  const statuses = new Map<number, ErrorCode[]>();
  for (const code of [...e.errors, ...ALWAYS])
    statuses.set(HTTP_STATUS[code], [...(statuses.get(HTTP_STATUS[code]) ?? []), code]);
  const responses: Record<string, JsonSchema> = {
    "200": {
      description: "OK",
      content: {
        "application/json": { schema: jsonSchemaOf(e.response) },
        ...(BINARY_RESPONSES[e.id] ? { [BATCH_MEDIA_TYPE]: binaryBatch("answer, when `accept` asks for it") } : {}),
      },
    },
  };
  for (const [status, codes] of [...statuses].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: codes.join(", "),
      content: { "application/json": { schema: errorRef } },
    };
  }
  return {
    operationId: e.id,
    summary: e.summary,
    tags: [e.service],
    ...(e.auth === "none" ? { security: [] } : {}),
    ...(parameters(e).length > 0 ? { parameters: parameters(e) } : {}),
    ...(e.body === NO_BODY
      ? {}
      : {
          requestBody: {
            required: !e.body.safeParse(undefined).success,
            content: {
              "application/json": { schema: jsonSchemaOf(e.body) },
              ...(BINARY_BODIES[e.id] ? { [BATCH_MEDIA_TYPE]: binaryBatch("request") } : {}),
            },
          },
        }),
    responses,
    "x-nimbus-route": routeKey(e),
  };
}

/** The OpenAPI 3.1 document of every endpoint. */
export function openApiDocument(): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const e of ENDPOINTS) {
    paths[e.path] ??= {};
    (paths[e.path] as Record<string, JsonSchema>)[e.method.toLowerCase()] = operation(e);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Nimbus",
      version: "1",
      description:
        "A serverless message broker with Apache RocketMQ's model. Errors answer {code, message} with RocketMQ ResponseCode names; see docs/api.md.",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    servers: [{ url: "http://127.0.0.1:9876", description: "npm run dev" }],
    tags: [...new Set(ENDPOINTS.map((e) => e.service))].map((name) => ({ name })),
    components: {
      schemas: components(),
      securitySchemes: {
        sigv4: {
          type: "apiKey",
          in: "header",
          name: "Authorization",
          description: "AWS SigV4 (API Gateway IAM auth), where the stage requires it",
        },
      },
    },
    security: [{ sigv4: [] }],
    paths,
    // Not HTTP: the push channel's WebSocket frames (docs/push-channel.md), found with GET /push-channel.
    "x-push-channel": {
      localPath: CHANNEL_PATH,
      discovery: "GET /push-channel",
      clientFrames: frameSchemas(CHANNEL_FRAMES.client),
      serverFrames: frameSchemas(CHANNEL_FRAMES.server),
    },
  };
}

function frameSchemas(frames: Record<string, z.ZodType>): Record<string, JsonSchema> {
  return Object.fromEntries(Object.entries(frames).map(([type, schema]) => [type, jsonSchemaOf(schema)]));
}
