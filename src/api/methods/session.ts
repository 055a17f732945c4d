/**
 * WebSocket session methods: public/auth, heartbeats, cancel-on-disconnect and subscriptions.
 * They act on the calling session (`context.session`), so they exist on the WebSocket only.
 */
import { Type } from '@sinclair/typebox';
import { VenueError } from '../../domain/errors.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import type { CallContext, MethodRegistry, SessionHandle } from '../registry.ts';
import {
  AuthParams,
  CancelOnDisconnectParams,
  ChannelsParams,
  EmptyParams,
  HeartbeatParams,
} from '../schemas/methods.ts';

const WS_ONLY = ['ws'] as const;
const Ok = Type.Literal('ok');
const ChannelList = Type.Array(Type.String());

function sessionOf(context: CallContext): SessionHandle {
  if (context.session === null)
    throw new VenueError('method_not_found', 'this method exists on the WebSocket only');
  return context.session;
}

export function registerSessionMethods(registry: MethodRegistry, authenticator: Authenticator): void {
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
    handler: (params, context) => {
      const session = sessionOf(context);
      const principal = authenticator.authenticateWs(params);
      session.authenticate(principal);
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
      'When this connection closes, cancel the open orders it placed (and the orders they made); orders of other connections stay.',
    access: 'private',
    transports: WS_ONLY,
    params: CancelOnDisconnectParams,
    result: Ok,
    handler: (_params, context) =>
      sessionOf(context)
        .setCancelOnDisconnect(true)
        .then(() => 'ok' as const),
  });
  registry.register({
    name: 'private/disable_cancel_on_disconnect',
    summary: 'Turns cancel-on-disconnect off for this connection.',
    access: 'private',
    transports: WS_ONLY,
    params: CancelOnDisconnectParams,
    result: Ok,
    handler: (_params, context) =>
      sessionOf(context)
        .setCancelOnDisconnect(false)
        .then(() => 'ok' as const),
  });
  registry.register({
    name: 'private/get_cancel_on_disconnect',
    summary: 'Whether cancel-on-disconnect is on for this connection.',
    access: 'private',
    transports: WS_ONLY,
    params: CancelOnDisconnectParams,
    result: Type.Object({ scope: Type.Literal('connection'), enabled: Type.Boolean() }),
    handler: (_params, context) => ({
      scope: 'connection' as const,
      enabled: sessionOf(context).cancelOnDisconnect,
    }),
  });

  for (const scope of ['public', 'private'] as const) {
    registry.register({
      name: `${scope}/subscribe`,
      summary: `Subscribes to ${scope === 'public' ? 'public' : 'public and private'} channels; returns the channels subscribed.`,
      access: scope,
      transports: WS_ONLY,
      params: ChannelsParams,
      result: ChannelList,
      handler: (params, context) => sessionOf(context).subscribe(params.channels),
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
