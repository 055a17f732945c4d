/**
 * The request signature of SEMANTICS.md (Authentication), shared by the server and the sdk.
 *
 * HTTP:      base64(HMAC-SHA256(secret, ts + "\n" + nonce + "\n" + METHOD + "\n" + pathWithQuery + "\n" + body))
 * WebSocket: the same over METHOD "GET", path "/ws" and an empty body, i.e. ts\nnonce\nGET\n/ws\n.
 * `ts` and `nonce` are signed exactly as sent (strings); `body` is the raw body ('' when empty).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const HEADER_TIMESTAMP = 'service-api-timestamp';
export const HEADER_NONCE = 'service-api-nonce';
export const HEADER_SIGNATURE = 'service-api-signature';

export function signaturePayload(
  ts: string,
  nonce: string,
  method: string,
  pathWithQuery: string,
  body: string,
): string {
  return `${ts}\n${nonce}\n${method.toUpperCase()}\n${pathWithQuery}\n${body}`;
}

export function sign(secret: string, payload: string): string {
  return createHmac('sha256', secret).update(payload).digest('base64');
}

export function signHttp(
  secret: string,
  ts: string,
  nonce: string,
  method: string,
  pathWithQuery: string,
  body: string,
): string {
  return sign(secret, signaturePayload(ts, nonce, method, pathWithQuery, body));
}

export function signWs(secret: string, ts: string, nonce: string): string {
  return sign(secret, signaturePayload(ts, nonce, 'GET', '/ws', ''));
}

/** Constant-time comparison of a presented signature with the expected one. */
export function signaturesMatch(presented: string, expected: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
