/**
 * The role each private method and flat route needs (docs/decisions.md, "Roles"), pinned: a new
 * method or route fails here until its role is chosen, and a role dropped from one (as the flat
 * portfolio routes and cancel-on-disconnect once lacked `trade`) fails too.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ERROR_CATALOGUE, VenueError } from '../domain/errors.ts';
import { apiSurface } from './api-docs-write.ts';
import type { Principal } from './auth/authenticator.ts';
import type { Role } from './auth/key-store.ts';
import { requireRole } from './dispatcher.ts';

const TRADE = ['trade'];
const TAKER = ['taker'];
const MAKER = ['maker'];
/** Any key of the user: reads. */
const ANY = null;

const METHODS: Record<string, readonly string[] | null> = {
  'private/buy': TRADE,
  'private/sell': TRADE,
  'private/edit': TRADE,
  'private/edit_by_label': TRADE,
  'private/cancel': TRADE,
  'private/cancel_all': TRADE,
  'private/cancel_all_by_instrument': TRADE,
  'private/cancel_all_by_currency': TRADE,
  'private/cancel_by_label': TRADE,
  'private/close_position': TRADE,
  'private/set_mmp_config': TRADE,
  'private/reset_mmp': TRADE,
  'private/enable_cancel_on_disconnect': TRADE,
  'private/disable_cancel_on_disconnect': TRADE,
  'private/set_self_trading_config': TRADE,
  'block/rfqs/create_rfq': TAKER,
  'block/rfqs/cancel_rfq': TAKER,
  'block/rfqs/accept': TAKER,
  'block/rfqs/cancel_trigger': TAKER,
  'block/rfqs/create_quote': MAKER,
  'block/rfqs/edit_quote': MAKER,
  'block/rfqs/cancel_quote': MAKER,
  'block/rfqs/cancel_all_quotes': MAKER,
  'block/rfqs/get_quotes': MAKER,
  'block/rfqs/get_rfqs': ['taker', 'maker'],
  // It trades nothing: it lists a combo, as any key's signed read of the combo's book does.
  'private/create_combo': ANY,
  // Each channel checks its own role on subscribing (the Block RFQ channels).
  'private/subscribe': ANY,
  'private/unsubscribe': ANY,
  'private/unsubscribe_all': ANY,
};

const FLAT_ROUTES: Record<string, readonly string[] | null> = {
  'POST /tt/core-broker/openapi/portfolios/submit': TRADE,
  'POST /tt/core-broker/openapi/portfolios/cancel': TRADE,
  'POST /tt/core-broker/openapi/portfolios/cancel-all': TRADE,
  'GET /tt/core-broker/openapi/portfolios/info': ANY,
};

test('every private method needs the role chosen for it', () => {
  const { methods } = apiSurface();
  for (const method of methods.list()) {
    if (method.access !== 'private') continue;
    const expected =
      method.name in METHODS ? METHODS[method.name] : method.name.includes('/get_') ? ANY : undefined;
    assert.notEqual(expected, undefined, `${method.name}: choose its role here (and in docs/decisions.md)`);
    assert.deepEqual(method.roles ?? null, expected, method.name);
  }
});

test('every flat route needs the role chosen for it', () => {
  const { flatRoutes } = apiSurface();
  assert.deepEqual(
    flatRoutes.map((route) => `${route.method} ${route.url}`).sort(),
    Object.keys(FLAT_ROUTES).sort(),
  );
  for (const route of flatRoutes) {
    assert.deepEqual(route.roles ?? null, FLAT_ROUTES[`${route.method} ${route.url}`], route.url);
  }
});

test('a key holding any one of a method’s roles is admitted; a key with none is refused forbidden', () => {
  const keyWith = (roles: readonly Role[]) => ({ roles: new Set(roles) }) as unknown as Principal;
  const rfqs = apiSurface().methods.get('block/rfqs/get_rfqs');
  const roles = rfqs?.roles;
  assert.deepEqual(roles, ['taker', 'maker']);
  for (const role of roles!) {
    assert.doesNotThrow(() => requireRole(keyWith([role]), roles, 'block/rfqs/get_rfqs', 'method'), role);
  }
  assert.throws(
    () => requireRole(keyWith(['trade']), roles, 'block/rfqs/get_rfqs', 'method'),
    (error: unknown) =>
      error instanceof VenueError &&
      error.errorName === 'forbidden' &&
      error.code === ERROR_CATALOGUE.forbidden.code,
  );
});
