/** The typed client of the Trading and Block RFQ Service. */
export { signHttp, signWs } from '../src/api/auth/signature.ts';
export type { ErrorName } from '../src/domain/errors.ts';
export { ApiError } from './errors.ts';
export { type Credentials, HttpClient, type HttpClientOptions, PORTFOLIO_PATH } from './http-client.ts';
export type * from './types.ts';
export { METHOD_NAMES } from './types.ts';
export {
  ReconnectError,
  type ReconnectErrorKind,
  SUBSCRIBE_CHANNELS_PER_CALL,
  WsClient,
  type WsClientOptions,
} from './ws-client.ts';
