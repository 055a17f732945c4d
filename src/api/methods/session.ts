/**
 * WebSocket session methods: public/auth, heartbeats, cancel-on-disconnect and subscriptions.
 * They act on the calling session (`context.session`), so they exist on the WebSocket only —
 * except cancel-on-disconnect's `account` scope (the account's default for new connections, kept
 * in the core), which is served over HTTP too, as on Deribit.
 */
import { Type } from '@sinclair/typebox';
import { VenueError } from '../../domain/errors.ts';
import type { Authenticator, Principal } from '../auth/authenticator.ts';
import type { ChannelRegistry } from '../channels.ts';
import type { CommandPort, ReadPort } from '../ports.ts';
import type { CallContext, MethodRegistry, SessionHandle } from '../registry.ts';
import {
  AuthParams,
  CancelOnDisconnectParams,
  ChannelsParams,
  EmptyParams,
  HeartbeatParams,
} from '../schemas/methods.ts';
import { accountOf, submitOrThrow } from './context.ts';

const WS_ONLY = ['ws'] as const;
const Ok = Type.Literal('ok');
const ChannelList = Type.Array(Type.String());
const CodScope = Type.Union([Type.Literal('connection'), Type.Literal('account')]);

export interface SessionMethodDeps {
  readonly commands: CommandPort;
  readonly reads: Pick<ReadPort, 'accountCancelOnDisconnect'>;
  /** The channels, for `public/subscribe` to refuse private ones. */
  readonly channels: Pick<ChannelRegistry, 'resolve'>;
}

function sessionOf(context: CallContext): SessionHandle {
  if (context.session === null)
    throw new VenueError('method_not_found', 'this method exists on the WebSocket only');
  return context.session;
}

/**
 * `public/subscribe` is for public channels, as on Deribit: a private one (which an authenticated
 * connection could see) is refused, naming its index, with nothing subscribed. The channels before
 * it are checked first: at the first one that does not resolve, the session's own checks refuse
 * it (an unknown name, or a private channel before `public/auth`).
 */
function refusePrivateChannels(
  channels: Pick<ChannelRegistry, 'resolve'>,
  names: readonly string[],
  principal: Principal | null,
): void {
  for (const [index, name] of names.entries()) {
    let found: ReturnType<ChannelRegistry['resolve']>;
    try {
      found = channels.resolve(name, principal);
    } catch {
      return;
    }
    if (found === null) return;
    if (found.family.access === 'private') {
      throw new VenueError(
        'invalid_params',
        `${name} is a private channel: subscribe to it with private/subscribe`,
        { field: `channels[${index}]`, channel: name },
      );
    }
  }
}

/** The connection scope needs a connection: over HTTP only the account scope exists. */
function connectionOf(context: CallContext): SessionHandle {
  if (context.session === null) {
    throw new VenueError(
      'invalid_params',
      'scope connection (the default) exists on the WebSocket only; over HTTP use scope account',
      { field: 'scope', transports: ['ws'] },
    );
  }
  return context.session;
}

export function registerSessionMethods(
  registry: MethodRegistry,
  authenticator: Authenticator,
  deps: SessionMethodDeps,
): void {
  /** The `account` scope: the key's default account's setting, answered once durable. */
  const setAccountDefault = (context: CallContext, enabled: boolean) =>
    submitOrThrow(deps.commands, {
      type: 'set_account_cancel_on_disconnect',
      accountId: accountOf(context),
      enabled,
    });

  registry.register({
    name: 'public/auth',
    summary: 'Authenticates the WebSocket: signature over timestamp\\nnonce\\nGET\\n/ws\\n.',
    access: 'public',
    transports: WS_ONLY,
    params: AuthParams,
    result: Type.Object({
      userId: Type.Integer(),
      accountIds: Type.Array(Type.Integer()),
      defaultAccountId: Type.Integer(),
      roles: Type.Array(Type.String()),
      deskName: Type.Union([Type.String(), Type.Null()]),
    }),
    handler: async (params, context) => {
      const session = sessionOf(context);
      const principal = authenticator.authenticateWs(params);
      // Answered once the account's cancel-on-disconnect default, when on, is in effect (durable).
      await session.authenticate(principal);
      return {
        userId: principal.userId,
        accountIds: [...principal.accountIds],
        defaultAccountId: principal.defaultAccountId,
        roles: [...principal.roles],
        deskName: principal.deskName,
      };
    },
  });

  registry.register({
    name: 'public/set_heartbeat',
    summary:
      'Server sends {method:"heartbeat", params:{type:"test_request"}} every interval s; answer with public/test.',
    access: 'public',
    transports: WS_ONLY,
    params: HeartbeatParams,
    result: Ok,
    handler: (params, context) => {
      sessionOf(context).setHeartbeat(params.interval);
      return 'ok' as const;
    },
  });
  registry.register({
    name: 'public/disable_heartbeat',
    summary: 'Stops heartbeats on this connection.',
    access: 'public',
    transports: WS_ONLY,
    params: EmptyParams,
    result: Ok,
    handler: (_params, context) => {
      sessionOf(context).setHeartbeat(null);
      return 'ok' as const;
    },
  });

  registry.register({
    name: 'private/enable_cancel_on_disconnect',
    summary:
      'scope connection (default, WebSocket only): when this connection closes, cancel the open orders it placed (and the orders they made); orders of other connections stay. scope account: connections that authenticate for the key’s default account from now on start with it on, and so does the WebSocket it is asked on.',
    access: 'private',
    // It cancels trading keys' orders (account scope: their future connections'): a trade control.
    roles: ['trade'],
    params: CancelOnDisconnectParams,
    result: Ok,
    handler: async (params, context) => {
      if (params.scope === 'account') {
        await setAccountDefault(context, true);
        // The connection it is asked on is protected too (docs/decisions.md).
        if (context.session !== null) await context.session.setCancelOnDisconnect(true);
      } else {
        await connectionOf(context).setCancelOnDisconnect(true);
      }
      return 'ok' as const;
    },
  });
  registry.register({
    name: 'private/disable_cancel_on_disconnect',
    summary:
      'scope connection (default, WebSocket only): turns cancel-on-disconnect off for this connection. scope account: connections that authenticate for the key’s default account from now on start with it off; open connections keep theirs.',
    access: 'private',
    // It cancels trading keys' orders (account scope: their future connections'): a trade control.
    roles: ['trade'],
    params: CancelOnDisconnectParams,
    result: Ok,
    handler: async (params, context) => {
      if (params.scope === 'account') await setAccountDefault(context, false);
      else await connectionOf(context).setCancelOnDisconnect(false);
      return 'ok' as const;
    },
  });
  registry.register({
    name: 'private/get_cancel_on_disconnect',
    summary:
      'Whether cancel-on-disconnect is on for this connection (scope connection, default, WebSocket only) or is the account default for new connections (scope account).',
    access: 'private',
    params: CancelOnDisconnectParams,
    result: Type.Object({ scope: CodScope, enabled: Type.Boolean() }),
    handler: (params, context) =>
      params.scope === 'account'
        ? { scope: 'account' as const, enabled: deps.reads.accountCancelOnDisconnect(accountOf(context)) }
        : { scope: 'connection' as const, enabled: connectionOf(context).cancelOnDisconnect },
  });

  for (const scope of ['public', 'private'] as const) {
    registry.register({
      name: `${scope}/subscribe`,
      summary: `Subscribes to ${scope === 'public' ? 'public channels (a private one is refused)' : 'public and private channels'}; returns the channels subscribed.`,
      access: scope,
      transports: WS_ONLY,
      params: ChannelsParams,
      result: ChannelList,
      handler: (params, context) => {
        const session = sessionOf(context);
        if (scope === 'public') refusePrivateChannels(deps.channels, params.channels, session.principal);
        return session.subscribe(params.channels);
      },
    });
    registry.register({
      name: `${scope}/unsubscribe`,
      summary: 'Unsubscribes; returns the channels removed.',
      access: scope,
      transports: WS_ONLY,
      params: ChannelsParams,
      result: ChannelList,
      handler: (params, context) => sessionOf(context).unsubscribe(params.channels),
    });
    registry.register({
      name: `${scope}/unsubscribe_all`,
      summary: 'Removes every subscription of this connection.',
      access: scope,
      transports: WS_ONLY,
      params: EmptyParams,
      result: Ok,
      handler: (_params, context) => {
        sessionOf(context).unsubscribeAll();
        return 'ok' as const;
      },
    });
  }
}
