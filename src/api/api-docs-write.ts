/**
 * Writes the generated API documents to `docs/api/` (`npm run docs:api`): the OpenAPI 3.1 and
 * AsyncAPI documents of every method, flat route and channel the service registers (gateway,
 * Block RFQ, portfolios), the same documents the running server serves at /docs.
 * `api-docs-write.test.ts` fails when the committed files drift from the schemas.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { buildAsyncApi, buildOpenApi } from './api-docs.ts';
import type { Authenticator } from './auth/authenticator.ts';
import { registerBuiltinChannels } from './builtin-channels.ts';
import { ChannelRegistry } from './channels.ts';
import { registerAccountSettingsMethods } from './methods/account-settings.ts';
import { registerComboMethods } from './methods/combos.ts';
import type { MethodDeps } from './methods/context.ts';
import { registerHistoryMethods } from './methods/history.ts';
import { API_VERSION, registerPublicMethods } from './methods/public.ts';
import { registerSessionMethods } from './methods/session.ts';
import { registerTradingMethods } from './methods/trading.ts';
import type { ReadPort } from './ports.ts';
import { MethodRegistry } from './registry.ts';

export const API_DOCS_DIR = 'docs/api';

import type { FlatRouteDefinition } from './http-routes.ts';
import { type MmpDeps, registerMmpChannels, registerMmpMethods } from './methods/mmp.ts';
import { type RfqMethodDeps, registerRfqChannels, registerRfqMethods } from './methods/rfq.ts';
import { registerPortfolioChannels } from './portfolios/channels.ts';
import { type PortfolioRouteDeps, registerPortfolioRoutes } from './portfolios/routes.ts';
/** Every method, flat route and channel the service registers, with handlers never to be called. */
export function apiSurface(): {
  methods: MethodRegistry;
  channels: ChannelRegistry;
  flatRoutes: FlatRouteDefinition[];
} {
  const methods = new MethodRegistry();
  const channels = new ChannelRegistry();
  const unused = {} as MethodDeps;
  registerPublicMethods(methods, unused);
  registerTradingMethods(methods, unused);
  registerHistoryMethods(methods, unused);
  registerAccountSettingsMethods(methods, unused);
  registerComboMethods(methods, unused);
  registerSessionMethods(methods, {} as Authenticator, { ...unused, channels });
  registerBuiltinChannels(channels, {} as ReadPort);
  registerRfqMethods(methods, {} as RfqMethodDeps);
  registerMmpMethods(methods, {} as MmpDeps);
  registerMmpChannels(channels, {} as ReadPort);
  registerRfqChannels(channels, {} as ReadPort);
  const flatRoutes: FlatRouteDefinition[] = [];
  registerPortfolioRoutes(
    { registerFlatRoute: (route) => void flatRoutes.push(route as FlatRouteDefinition) },
    {} as PortfolioRouteDeps,
  );
  registerPortfolioChannels(channels, {} as ReadPort);
  return { methods, channels, flatRoutes };
}

/** The documents as text. */
export function renderApiDocs(): { openapi: string; asyncapi: string } {
  const { methods, channels, flatRoutes } = apiSurface();
  return {
    openapi: `${JSON.stringify(buildOpenApi(methods, flatRoutes, API_VERSION), null, 2)}\n`,
    asyncapi: `${JSON.stringify(buildAsyncApi(methods, channels, API_VERSION), null, 2)}\n`,
  };
}

if (process.argv[1]?.endsWith('api-docs-write.ts')) {
  const docs = renderApiDocs();
  mkdirSync(API_DOCS_DIR, { recursive: true });
  writeFileSync(`${API_DOCS_DIR}/openapi.json`, docs.openapi);
  writeFileSync(`${API_DOCS_DIR}/asyncapi.json`, docs.asyncapi);
  console.log(`wrote ${API_DOCS_DIR}/openapi.json and asyncapi.json`);
}
