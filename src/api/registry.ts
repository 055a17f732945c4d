/**
 * The method registry: every envelope method (`POST /api/<method>` and the WebSocket) is one
 * registration here. Other parts (RFQ, portfolios) register their methods the same way.
 *
 * Invariants:
 * - A method's params schema is compiled once at registration and always runs before its handler.
 * - `access` decides authentication: `public` methods are answered without a key; `private`
 *   ones need an authenticated principal and, when `roles` is set, one of those roles.
 * - `matching` methods draw from the matching-engine rate bucket, the rest from the other one.
 * - `transports` limits a method to the WebSocket (heartbeats, subscriptions, auth).
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { Principal } from './auth/authenticator.ts';
import type { Role } from './auth/key-store.ts';
import { compileValidator, type Validator } from './validation.ts';

export type Transport = 'http' | 'ws';

/** What a handler knows about its caller. */
export interface CallContext {
  readonly principal: Principal | null;
  readonly transport: Transport;
  /** The WebSocket session, when the call came over one. */
  readonly session: SessionHandle | null;
  /** Server time when the call was received. */
  readonly receivedAt: number;
}

/** The parts of a WebSocket session that session-level methods use. */
export interface SessionHandle {
  readonly id: number;
  principal: Principal | null;
  /**
   * Sets the principal; resolves once the connection's cancel-on-disconnect is as the account's
   * default has it (on: durable in the core), so `public/auth` is answered after that.
   */
  authenticate(principal: Principal): Promise<void>;
  setHeartbeat(intervalSec: number | null): void;
  /** Resolves once the core has it (journaled): see ws-gateway.ts. */
  setCancelOnDisconnect(enabled: boolean): Promise<void>;
  readonly cancelOnDisconnect: boolean;
  /** The cancel-on-disconnect session id while it is on (orders placed carry it), else null. */
  readonly codSession: string | null;
  /**
   * Told of each order this connection placed (cancel-on-disconnect cancels exactly those), with
   * the `codSession` its command carried. When the order has to join the connection's session in
   * a second command (it was sent before cancel-on-disconnect was turned on), returns the promise
   * of that command's durability: the order is answered after it, so an answered order is covered.
   */
  placed(orderId: string, codSession: string | null): Promise<void> | undefined;
  subscribe(channels: readonly string[]): Promise<string[]>;
  unsubscribe(channels: readonly string[]): string[];
  unsubscribeAll(): void;
}

export interface MethodDefinition<P extends TSchema = TSchema, R extends TSchema = TSchema> {
  readonly name: string;
  readonly summary: string;
  readonly access: 'public' | 'private';
  readonly roles?: readonly Role[];
  readonly matching?: boolean;
  readonly transports?: readonly Transport[];
  readonly params: P;
  readonly result: R;
  readonly handler: (params: Static<P>, context: CallContext) => Promise<Static<R>> | Static<R>;
}

export interface RegisteredMethod extends MethodDefinition {
  readonly validate: Validator;
}

export class MethodRegistry {
  private readonly methods = new Map<string, RegisteredMethod>();

  register<P extends TSchema, R extends TSchema>(definition: MethodDefinition<P, R>): void {
    if (this.methods.has(definition.name)) throw new Error(`method ${definition.name} is already registered`);
    if (!/^(public|private|block\/[a-z_]+)\/[a-z_]+$/.test(definition.name)) {
      throw new Error(`method name ${definition.name} does not follow <scope>/<name>`);
    }
    this.methods.set(definition.name, {
      ...(definition as unknown as MethodDefinition),
      validate: compileValidator(definition.params),
    });
  }

  get(name: string): RegisteredMethod | undefined {
    return this.methods.get(name);
  }

  list(): RegisteredMethod[] {
    return [...this.methods.values()].sort((a, b) => a.name.localeCompare(b.name));
  }
}
