/**
 * The API's operations as the property-based suite sees them: read from the OpenAPI document (app.swagger()),
 * plus the internal routes the document hides.
 */

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  nullable?: boolean;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query';
  required?: boolean;
  schema: JsonSchema;
}

export interface Operation {
  method: string;
  /** OpenAPI form: /v1/webhooks/{id}. */
  path: string;
  parameters: Parameter[];
  body?: JsonSchema;
  auth: 'api' | 'internal' | 'none';
}

interface OpenApiDocument {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: Parameter[];
        security?: unknown[];
        requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
      }
    >
  >;
}

/**
 * The internal routes are hidden from the public document; their bodies as the routes declare them
 * (src/api/routes/internal-events.ts, src/api/routes/internal-dashboard-sessions.ts,
 * src/api/routes/internal-operational-webhooks.ts, src/api/routes/internal-parcels.ts).
 */
export const INTERNAL_OPERATIONS: Operation[] = [
  {
    method: 'POST',
    path: '/internal/v1/events',
    parameters: [],
    auth: 'internal',
    body: {
      type: 'object',
      required: ['account_id', 'livemode', 'type', 'data'],
      properties: {
        account_id: { type: 'string' },
        livemode: { type: 'boolean' },
        type: { type: 'string' },
        data: { type: 'object' },
        id: { type: 'string' },
      },
    },
  },
  {
    method: 'POST',
    path: '/internal/v1/dashboard/sessions',
    parameters: [],
    auth: 'internal',
    body: { type: 'object', required: ['account_id'], properties: { account_id: { type: 'string', maxLength: 200 } } },
  },
  {
    method: 'POST',
    path: '/internal/v1/operational-webhooks',
    parameters: [],
    auth: 'internal',
    body: {
      type: 'object',
      required: ['url'],
      properties: { url: { type: 'string' }, events: { type: 'array', items: { type: 'string' } } },
    },
  },
  { method: 'GET', path: '/internal/v1/operational-webhooks', parameters: [], auth: 'internal' },
  {
    method: 'DELETE',
    path: '/internal/v1/operational-webhooks/{id}',
    parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
    auth: 'internal',
  },
  {
    method: 'POST',
    path: '/internal/v1/parcels/{parcel_id}/erase',
    parameters: [{ name: 'parcel_id', in: 'path', required: true, schema: { type: 'string', maxLength: 200 } }],
    auth: 'internal',
    body: { type: 'object', required: ['account_id'], properties: { account_id: { type: 'string', maxLength: 200 } } },
  },
];

export function operationsOf(document: unknown): Operation[] {
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries((document as OpenApiDocument).paths)) {
    for (const [method, op] of Object.entries(methods)) {
      operations.push({
        method: method.toUpperCase(),
        path,
        parameters: op.parameters ?? [],
        body: op.requestBody?.content?.['application/json']?.schema,
        auth: op.security ? 'api' : 'none',
      });
    }
  }
  return operations;
}
