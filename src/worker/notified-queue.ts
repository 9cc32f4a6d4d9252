/**
 * The events and deliveries a dispatcher was notified of and has not handed off yet, one queue per account,
 * taken in turns: a batch holds one id of each waiting account before a second of any. One account publishing
 * thousands at once so never queues another account's next event behind them; the other waits for the batch
 * under way at most. Within an account, ids keep the order they were notified in.
 */
export class NotifiedQueue {
  /** Accounts with ids waiting, in the order they are served next (Map order); `head` is the next id's index. */
  private readonly byAccount = new Map<string, { ids: string[]; head: number }>();
  private readonly waiting = new Set<string>();

  get size(): number {
    return this.waiting.size;
  }

  /** A notification's payload, `<id> <account id>`; one with no account (an older trigger's) is queued as such. */
  addPayload(payload: string): void {
    const [id, account = ''] = payload.split(' ', 2) as [string, string?];
    this.add(id, account);
  }

  add(id: string, account: string): void {
    if (id === '' || this.waiting.has(id)) return;
    this.waiting.add(id);
    const queue = this.byAccount.get(account);
    if (queue) queue.ids.push(id);
    else this.byAccount.set(account, { ids: [id], head: 0 });
  }

  /**
   * Up to `limit` ids of the accounts `eligible` admits, one account after another, and the accounts they are
   * of; an account served goes to the back of the turns, so the next batch starts with the accounts this one
   * reached last.
   */
  take(limit: number, eligible: (account: string) => boolean = () => true): { ids: string[]; accounts: string[] } {
    const ids: string[] = [];
    const served = new Set<string>();
    const admitted = new Set([...this.byAccount.keys()].filter(eligible));
    while (ids.length < limit && admitted.size > 0) {
      for (const [account, queue] of [...this.byAccount]) {
        if (ids.length >= limit) break;
        if (!admitted.has(account)) continue;
        const id = queue.ids[queue.head++] as string;
        this.waiting.delete(id);
        ids.push(id);
        served.add(account);
        this.byAccount.delete(account);
        if (queue.head === queue.ids.length) {
          admitted.delete(account);
          continue;
        }
        // An account never drained keeps its array short: what was taken is dropped now and then.
        if (queue.head >= 1_024 && queue.head * 2 >= queue.ids.length) {
          queue.ids = queue.ids.slice(queue.head);
          queue.head = 0;
        }
        this.byAccount.set(account, queue);
      }
    }
    return { ids, accounts: [...served] };
  }
}
