/**
 * OpenAPI 3.1 and AsyncAPI 2.6 documents generated from the method and channel registries (the
 * same TypeBox schemas that validate requests). Served at `/docs/openapi.json` and
 * `/docs/asyncapi.json`; `npm run docs:api` writes them under `docs/api/`.
 */
import type { TSchema } from '@sinclair/typebox';
import { ERROR_CATALOGUE } from '../domain/errors.ts';
import type { ChannelFamily, ChannelRegistry } from './channels.ts';
import type { FlatRouteDefinition } from './http-routes.ts';
import type { MethodRegistry } from './registry.ts';

/** JSON schema without TypeBox's symbol keys and `$id`s (inlined documents). */
function plain(schema: TSchema): unknown {
  return JSON.parse(JSON.stringify(schema, (key, value) => (key === '$id' ? undefined : value)));
}

/**
 * A schema in the JSON Schema 2020-12 dialect of OpenAPI 3.1: TypeBox writes tuples (a book level
 * `[price, quantity]`) as draft-07 `items: [...]` with `additionalItems`, which 2020-12 spells
 * `prefixItems` and `items: false`.
 */
function plain2020(schema: TSchema): unknown {
  return JSON.parse(
    JSON.stringify(schema, (key, value) => {
      if (key === '$id') return undefined;
      if (value === null || typeof value !== 'object' || !Array.isArray(value.items)) return value;
      const { items, additionalItems, ...rest } = value as Record<string, unknown>;
      return { ...rest, prefixItems: items, ...(additionalItems === false ? { items: false } : {}) };
    }),
  );
}

const ErrorObject = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: { type: 'integer', enum: Object.values(ERROR_CATALOGUE).map((entry) => entry.code) },
    message: { type: 'string' },
    data: { type: 'object', description: 'field: the input at fault, when there is one' },
  },
};

const SECURITY_HEADERS = ['Service-API-Timestamp', 'Service-API-Nonce', 'Service-API-Signature'];

/**
 * `portfolios_submit` for `POST …/openapi/portfolios/submit`: the path's last two segments, and
 * the HTTP method in front when it is not POST (a GET and a POST on one path stay distinct).
 */
function flatOperationId(route: FlatRouteDefinition): string {
  const name = route.url.split('/').filter(Boolean).slice(-2).join('_');
  return route.method === 'POST' ? name : `${route.method.toLowerCase()}_${name}`;
}

export function buildOpenApi(
  methods: MethodRegistry,
  flatRoutes: readonly FlatRouteDefinition[],
  version: string,
): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const method of methods.list()) {
    if (method.transports && !method.transports.includes('http')) continue;
    paths[`/api/${method.name}`] = {
      post: {
        operationId: method.name.replace(/\//g, '_'),
        summary: method.summary,
        tags: [method.name.split('/').slice(0, -1).join('/')],
        ...(method.access === 'private' ? { security: [{ apiKey: [] }] } : {}),
        ...rolesOf(method.roles),
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                additionalProperties: false,
                required: ['rid', 'method', 'params'],
                properties: {
                  rid: { type: 'integer' },
                  method: { const: method.name },
                  params: plain2020(method.params),
                },
              },
            },
          },
        },
        responses: {
          '200': {
            description:
              '{rid, result} on success; {rid, error} when the service refuses a well-formed envelope',
            content: {
              'application/json': {
                schema: {
                  oneOf: [
                    {
                      type: 'object',
                      required: ['rid', 'result'],
                      properties: { rid: { type: 'integer' }, result: plain2020(method.result) },
                    },
                    {
                      type: 'object',
                      required: ['rid', 'error'],
                      properties: { rid: { type: 'integer' }, error: ErrorObject },
                    },
                  ],
                },
              },
            },
          },
          '400': { description: 'not JSON / not an envelope' },
          '401': { description: 'authentication failed' },
          '413': { description: 'body too large' },
          '429': { description: 'rate limited' },
        },
      },
    };
  }
  for (const route of flatRoutes) {
    const operation: Record<string, unknown> = {
      operationId: flatOperationId(route),
      summary: route.summary,
      security: [{ apiKey: [] }],
      ...rolesOf(route.roles),
      responses: {
        '200': {
          description: '{succ, code, message, value}',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: {
                  succ: { type: 'boolean' },
                  code: { type: 'integer' },
                  message: { type: 'string' },
                  value: route.value === undefined ? {} : plain2020(route.value),
                },
              },
            },
          },
        },
      },
    };
    if (route.body)
      operation.requestBody = {
        required: true,
        content: { 'application/json': { schema: plain2020(route.body) } },
      };
    if (route.query) operation.parameters = queryParameters(route.query);
    paths[route.url] = { ...((paths[route.url] as object) ?? {}), [route.method.toLowerCase()]: operation };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Trading and Block RFQ Service',
      version,
      description:
        'Envelope methods over HTTP (POST /api/<method>) and WebSocket (/ws). Signed requests carry ' +
        `Authorization: Bearer <API_KEY> and ${SECURITY_HEADERS.join(', ')}; the signature is ` +
        'base64(HMAC-SHA256(secret, ts\\nnonce\\nMETHOD\\npathWithQuery\\nbody)).',
    },
    components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer' } } },
    paths,
  };
}

function queryParameters(schema: TSchema): unknown[] {
  const properties =
    (schema as { properties?: Record<string, unknown>; required?: string[] }).properties ?? {};
  const required = new Set((schema as { required?: string[] }).required ?? []);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: 'query',
    required: required.has(name),
    schema: plain2020(property as TSchema),
  }));
}

function intervalsNote(family: ChannelFamily): string {
  if (family.intervals === undefined) return '';
  const spellings = family.intervals.map((interval) => `.${interval}`).join(', ');
  return ` Also subscribable with Deribit's interval suffix ${spellings}: the same channel, every change pushed as it is committed.`;
}

export function buildAsyncApi(
  methods: MethodRegistry,
  channels: ChannelRegistry,
  version: string,
): Record<string, unknown> {
  const channelDocs: Record<string, unknown> = {};
  for (const family of channels.list()) {
    const change = { name: 'change', payload: plain(family.payload) };
    channelDocs[family.pattern] = {
      description: `${family.summary} (${family.access}).${intervalsNote(family)} Push: {method:"subscription", params:{channel, seq, snapshot?, data}}; the message payload is its data.`,
      subscribe: {
        message:
          family.snapshotPayload === undefined
            ? change
            : {
                oneOf: [
                  {
                    name: 'snapshot',
                    summary: 'The first push on subscribing: seq 1 with snapshot: true.',
                    payload: plain(family.snapshotPayload),
                  },
                  { ...change, summary: 'Each change after the snapshot: seq 2, 3, … without snapshot.' },
                ],
              },
      },
    };
  }
  const requests = methods.list().map((method) => ({
    name: method.name,
    summary: method.summary,
    access: method.access,
    ...rolesOf(method.roles),
    payload: plain(method.params),
    result: plain(method.result),
  }));
  return {
    asyncapi: '2.6.0',
    info: { title: 'Trading and Block RFQ Service WebSocket', version },
    servers: {
      local: { url: 'localhost:{port}/ws', protocol: 'ws', variables: { port: { default: '8080' } } },
    },
    channels: channelDocs,
    'x-requests': requests,
  };
}

/** `x-roles`: the key needs one of these roles (docs/decisions.md, "Roles"); none: any key. */
function rolesOf(roles: readonly string[] | undefined): Record<string, unknown> {
  return roles === undefined ? {} : { 'x-roles': [...roles] };
}
