/**
 * Open connections, in all and per client address: each counted from `hold` until its socket
 * emits `close` (once, however it ends). The HTTP server's TCP caps and the WebSocket upgrade caps
 * each keep one.
 */
export class ConnectionCount {
  private total = 0;
  private readonly byAddress = new Map<string, number>();

  get open(): number {
    return this.total;
  }

  /** Connections open from `address`. */
  from(address: string): number {
    return this.byAddress.get(address) ?? 0;
  }

  /** Counts `socket` from `address` until it closes. */
  hold(address: string, socket: { once(event: 'close', listener: () => void): unknown }): void {
    this.total++;
    this.byAddress.set(address, this.from(address) + 1);
    socket.once('close', () => {
      this.total--;
      const left = this.from(address) - 1;
      if (left <= 0) this.byAddress.delete(address);
      else this.byAddress.set(address, left);
    });
  }
}
